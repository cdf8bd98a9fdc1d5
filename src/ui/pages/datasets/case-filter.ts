import { compileFilter, type FilterableCase } from "./filter-expression.ts";

/**
 * The dataset view's filters: every field given narrows the cases shown.
 * `expression` is the filter language of `filter-expression.ts`.
 */
export interface CaseFilter {
  /** Cases whose split is one of these (`""` stands for "no split"). */
  readonly splits?: readonly string[];
  /** Cases carrying every one of these tags. */
  readonly tags?: readonly string[];
  readonly status?: "active" | "archived";
  /** Cases that passed, failed, or have no pass/fail label. */
  readonly label?: "pass" | "fail" | "none";
  /** Cases whose id contains this text (case-insensitive). */
  readonly id?: string;
  readonly expression?: string;
}

/** True when the filter keeps every case (nothing to compute). */
export function isEmptyFilter(filter: CaseFilter): boolean {
  return (
    !filter.splits?.length &&
    !filter.tags?.length &&
    filter.status === undefined &&
    filter.label === undefined &&
    !filter.id?.trim() &&
    !filter.expression?.trim()
  );
}

/**
 * Which cases does this combination of filters keep? One predicate for the
 * split, tag, status, label, id-substring and expression filters together.
 * Throws the expression's `FilterSyntaxError` when it cannot be read.
 *
 * @example cases.filter(caseFilter({ splits: ["adversarial"], tags: ["color"], expression: "not label" }))
 */
export function caseFilter(filter: CaseFilter): (c: FilterableCase) => boolean {
  const tests: ((c: FilterableCase) => boolean)[] = [];
  if (filter.splits?.length) {
    const splits = new Set(filter.splits);
    tests.push((c) => splits.has(c.split ?? ""));
  }
  if (filter.tags?.length) {
    const tags = filter.tags;
    tests.push((c) => tags.every((t) => c.tags.includes(t)));
  }
  if (filter.status !== undefined) tests.push((c) => c.status === filter.status);
  if (filter.label !== undefined) {
    const want = filter.label === "pass" ? true : filter.label === "fail" ? false : undefined;
    tests.push((c) => c.label === want);
  }
  const id = filter.id?.trim().toLowerCase();
  if (id) tests.push((c) => c.id.toLowerCase().includes(id));
  if (filter.expression?.trim()) tests.push(compileFilter(filter.expression));
  return (c) => tests.every((t) => t(c));
}

/** How a dataset's cases spread over splits, tags, statuses and labels (what the filters offer). */
export interface Facets {
  readonly cases: number;
  /** `[split, count]`, most cases first; `""` counts cases with no split. */
  readonly splits: readonly (readonly [string, number])[];
  /** `[tag, count]`, most cases first. */
  readonly tags: readonly (readonly [string, number])[];
  readonly statuses: { readonly active: number; readonly archived: number };
  readonly labels: { readonly pass: number; readonly fail: number; readonly none: number };
  /** Cases with an image. */
  readonly withImage: number;
  /** Distinct images. */
  readonly images: number;
}

/**
 * Counts cases by split, tag, status and label as they are added (an import
 * streams them; the view adds a page at a time).
 *
 * @example const f = new FacetCounter(); cases.forEach((c) => f.add(c)); f.result().splits // [["random", 200], …]
 */
export class FacetCounter {
  #cases = 0;
  readonly #splits = new Map<string, number>();
  readonly #tags = new Map<string, number>();
  readonly #statuses = { active: 0, archived: 0 };
  readonly #labels = { pass: 0, fail: 0, none: 0 };
  #withImage = 0;
  readonly #images = new Set<string>();

  add(c: FilterableCase): void {
    this.#cases++;
    const split = c.split ?? "";
    this.#splits.set(split, (this.#splits.get(split) ?? 0) + 1);
    for (const t of c.tags) this.#tags.set(t, (this.#tags.get(t) ?? 0) + 1);
    if (c.status === "archived") this.#statuses.archived++;
    else this.#statuses.active++;
    if (c.label === true) this.#labels.pass++;
    else if (c.label === false) this.#labels.fail++;
    else this.#labels.none++;
    if (c.input.image !== undefined) {
      this.#withImage++;
      this.#images.add(c.input.image);
    }
  }

  result(): Facets {
    const sorted = (m: Map<string, number>) =>
      [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return {
      cases: this.#cases,
      splits: sorted(this.#splits),
      tags: sorted(this.#tags),
      statuses: { ...this.#statuses },
      labels: { ...this.#labels },
      withImage: this.#withImage,
      images: this.#images.size,
    };
  }
}

/** One row of the case table: what the table shows, cut to size (the full case is read on demand). */
export interface CaseRowView {
  /** Position in the dataset (the order cases were imported in). */
  readonly index: number;
  readonly id: string;
  readonly prompt: string;
  /** The image's reference (`sha256:…` once stored), when the case has one. */
  readonly image?: string;
  /** The expected answer as text ("" when there is none). */
  readonly expected: string;
  readonly split?: string;
  readonly tags: readonly string[];
  readonly status: string;
  readonly label?: boolean;
}

const PROMPT_CHARS = 240;
const EXPECTED_CHARS = 120;

function cut(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/**
 * The expected answer as one line of text: strings as they are, anything else as JSON.
 *
 * @example expectedText(["yes", "y"]) // '["yes","y"]'
 */
export function expectedText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * What the case table shows of one case: long prompts and answers cut (the
 * detail shows them whole), so a window of rows stays small to send.
 *
 * @example rowView(c, 0).prompt // "is there a red circle?"
 */
export function rowView(c: FilterableCase, index: number): CaseRowView {
  return {
    index,
    id: c.id,
    prompt: cut(c.input.prompt, PROMPT_CHARS),
    ...(c.input.image !== undefined && { image: c.input.image }),
    expected: cut(expectedText(c.expected), EXPECTED_CHARS),
    ...(c.split !== undefined && { split: c.split }),
    tags: c.tags,
    status: c.status,
    ...(c.label !== undefined && { label: c.label }),
  };
}
