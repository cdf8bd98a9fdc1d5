import { describe, parseLabel, rowToCase, setField, type RowResult } from "./row.ts";
import type { ColumnMapping, ImportedCase, Problem } from "./types.ts";

/** Column names tried, in order, for each case field a mapping leaves unset. */
const DETECT: Record<keyof ColumnMapping, readonly string[]> = {
  id: ["id", "case_id", "sample_id", "uid", "example_id", "doc_id", "idx"],
  input: ["input", "prompt", "question", "query", "instruction", "text"],
  image: ["image", "image_path", "img", "image_file", "image_url"],
  expected: ["expected", "target", "answer", "reference", "ideal", "gold"],
  label: ["passed", "pass", "correct", "is_correct", "success", "verdict", "label"],
  cluster: ["cluster", "cluster_id", "group", "group_id"],
  split: ["split", "subset"],
  tags: ["tags"],
  status: ["status"],
};

/** A mapping with every field resolved to a column that exists (or left out). */
export type ResolvedMapping = { readonly [K in keyof ColumnMapping]?: string };

/**
 * Which column is which case field? Uses the explicit mapping where given
 * (each named column must exist) and common column names elsewhere. A label
 * or status column is only detected when every value in it reads as a
 * verdict (pass/fail, 1/0, C/I …) or a status (active/archived); otherwise it stays a signal.
 *
 * @example resolveMapping(["q", "ok", "x"], { input: "q", label: "ok" }) // { input: "q", label: "ok" }
 */
export function resolveMapping(
  columns: readonly string[],
  mapping: ColumnMapping = {},
  rows: readonly Record<string, unknown>[] = [],
): ResolvedMapping {
  const have = new Set(columns);
  const out: Record<string, string> = {};
  const taken = new Set<string>();
  for (const field of Object.keys(DETECT) as (keyof ColumnMapping)[]) {
    const given = mapping[field];
    if (given !== undefined) {
      if (!have.has(given))
        throw new Error(
          `column mapping: ${field} column '${given}' is not in the file; columns are [${columns.map((c) => `'${c}'`).join(", ")}]`,
        );
      out[field] = given;
      taken.add(given);
    }
  }
  for (const field of Object.keys(DETECT) as (keyof ColumnMapping)[]) {
    if (out[field] !== undefined) continue;
    const found = DETECT[field].find((name) => have.has(name) && !taken.has(name));
    if (found === undefined) continue;
    if (field === "label" && !rows.every((r) => empty(r[found]) || parseLabel(r[found]) !== undefined)) continue;
    if (field === "status" && !rows.every((r) => empty(r[found]) || r[found] === "active" || r[found] === "archived"))
      continue;
    out[field] = found;
    taken.add(found);
  }
  return out;
}

export interface TableOptions {
  /** The 1-based line (or row) number of each row, for problems; default row index + 1. */
  readonly lines?: readonly number[];
  /**
   * Require an input column (default true). `explore` over eval logs may not
   * have prompts: with false, a row without input gets `{ prompt: "" }`.
   */
  readonly requireInput?: boolean;
  /** Read numeric-looking text in `meta` as numbers (CSV cells are all text; signals want numbers). */
  readonly numericMeta?: boolean;
}

/**
 * What cases do these table rows (CSV records, Parquet rows, any tool's
 * per-sample rows) make? Maps the id / input / image / expected / label /
 * cluster / split / tags / status columns onto case fields (explicitly or by
 * common names) and keeps every other column in `meta` as a candidate
 * signal. A pass/fail column becomes `label` (true = pass). Bad rows become
 * problems; the rest are kept.
 *
 * @example importTable([{ q: "2+2?", ok: "pass", len: 4 }], { input: "q", label: "ok" })
 *   // { cases: [{ id: "…", input: { prompt: "2+2?" }, label: true, meta: { len: 4 }, … }], problems: [] }
 */
export function importTable(
  rows: readonly Record<string, unknown>[],
  mapping: ColumnMapping = {},
  options: TableOptions = {},
): { cases: ImportedCase[]; problems: Problem[]; mapping: ResolvedMapping } {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const resolved = resolveMapping(columns, mapping, rows);
  const cases: ImportedCase[] = [];
  const problems: Problem[] = [];
  rows.forEach((row, i) => {
    const line = options.lines?.[i] ?? i + 1;
    const result = tableRowToCase(row, resolved, options);
    if ("case" in result) cases.push(result.case);
    else problems.push({ line, reason: result.reason, ...(result.id !== undefined && { id: result.id }) });
  });
  return { cases, problems, mapping: resolved };
}

/** One table row as a case, under a resolved mapping. */
export function tableRowToCase(
  row: Record<string, unknown>,
  mapping: ResolvedMapping,
  options: TableOptions = {},
): RowResult {
  const mapped = mappedColumns(mapping);
  const meta: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row))
    if (!mapped.has(key))
      setField(meta, key, options.numericMeta && typeof value === "string" ? numeric(value) : value);
  const get = (field: keyof ColumnMapping) => (mapping[field] !== undefined ? row[mapping[field]] : undefined);

  let input = get("input");
  if (typeof input === "string" && input.trim().startsWith("{")) {
    // A CSV cell may hold the JSON form {"prompt", "image"}.
    try {
      const parsed: unknown = JSON.parse(input);
      if (parsed && typeof parsed === "object" && "prompt" in parsed) input = parsed;
    } catch {
      // Plain text that starts with a brace: a prompt like any other.
    }
  }
  const image = get("image");
  if (!empty(image)) {
    if (typeof image !== "string") return { reason: `image must be a path or a data URL, got a ${describe(image)}` };
    if (typeof input === "string") input = { prompt: input, image };
    else if (empty(input)) input = { prompt: "", image };
  }
  if (empty(input) && options.requireInput === false) input = { prompt: "" };

  let label: unknown = undefined;
  const rawLabel = get("label");
  if (!empty(rawLabel)) {
    label = parseLabel(rawLabel);
    if (label === undefined)
      return {
        reason: `label ${JSON.stringify(rawLabel)} in column '${mapping.label}' is not a verdict; use pass/fail, true/false, 1/0 or C/I`,
      };
  }
  let tags = get("tags");
  if (typeof tags === "string" && tags.trim().startsWith("[")) {
    try {
      tags = JSON.parse(tags);
    } catch {
      // Not JSON: split on separators below.
    }
  }
  const expected = get("expected");
  return rowToCase({
    id: get("id"),
    input,
    ...(!empty(expected) && { expected }),
    tags,
    split: get("split"),
    cluster: get("cluster"),
    status: get("status"),
    label,
    meta,
  });
}

/** The columns a mapping uses, built once per mapping rather than once per row. */
const mappedCache = new WeakMap<ResolvedMapping, ReadonlySet<string>>();
function mappedColumns(mapping: ResolvedMapping): ReadonlySet<string> {
  let columns = mappedCache.get(mapping);
  if (!columns) {
    columns = new Set(Object.values(mapping));
    mappedCache.set(mapping, columns);
  }
  return columns;
}

function empty(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

/**
 * "3.5" → 3.5; the non-finite numbers as Python and pandas write them into a
 * CSV ("nan", "NaN", "inf", "-inf", "Infinity", and overflow such as "1e999")
 * → NaN / ±Infinity, as in a JSON log (signals read them as missing); "" and words stay as they are.
 */
function numeric(text: string): unknown {
  const t = text.trim();
  if (t === "nan" || t === "NaN") return NaN;
  if (/^[-+]?(inf|Infinity)$/.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
  if (t === "" || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return text;
  return Number(t);
}
