import { UnreadableFileError } from "./errors.ts";
import { describe, parseLabel } from "./row.ts";
import type { ColumnMapping, ImportWarning, LabelSource, Problem } from "./types.ts";

/**
 * What the per-sample logs of the tools people already use (Inspect AI,
 * lm-evaluation-harness, promptfoo) share once read: rows in the dataset
 * shape (`{ id, input, expected, cluster, meta }`, read by `rowToCase`),
 * every other field kept in `meta` (flattened one level, as `doc.subject`,
 * `score.match` …) so `explore` can test it as a signal, and one label column
 * chosen for the whole file by `labelLog`.
 */

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Copies `source` into `meta` under `prefix.`, one level deep; arrays and objects below stay whole. */
export function flattenInto(meta: Json, prefix: string, source: unknown): void {
  if (!isObject(source)) {
    if (source !== undefined) meta[prefix] = source;
    return;
  }
  for (const [key, value] of Object.entries(source)) meta[`${prefix}.${key}`] = value;
}

/** The text of a chat message's content (a string, or a list of parts with `text`). */
export function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part) => (isObject(part) && typeof part.text === "string" ? part.text : ""))
      .filter(Boolean)
      .join("\n");
  return undefined;
}

/** The first image part of a chat message's content (`{ type: "image", image }`). */
export function contentImage(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  for (const part of content)
    if (isObject(part) && part.type === "image" && typeof part.image === "string") return part.image;
  return undefined;
}

/** Rows read from one tool's log, before one label column is chosen for the whole file. */
export interface LogRows {
  /** What wrote it, for messages: "Inspect AI log", "lm-eval samples file", "promptfoo results file". */
  readonly tool: string;
  /** What a verdict column is called for this tool, for messages: "scorer", "metric", "column". */
  readonly noun: string;
  /** Each sample as a dataset row, or the value that could not be one, with its 1-based line or sample number. */
  readonly rows: { readonly line: number; readonly row: unknown }[];
  /** `meta` columns that may hold the verdict, in the tool's order of preference. */
  readonly verdicts: readonly string[];
  /** The `meta` columns that are `label` or derived from it, `label` included. */
  readonly derived: (label: string) => string[];
  readonly warnings: ImportWarning[];
  readonly problems: Problem[];
}

/** How a name given with `--label` may be spelled in a log's columns: as is, as a scorer, a named score, an aggregate metric. */
function spellings(name: string): string[] {
  return [name, `score.${name}`, `namedScores.${name}`, name.replace(/,none$/, "")];
}

const FIELDS = ["id", "input", "image", "expected", "cluster", "split", "tags", "status"] as const;

interface Tally {
  readonly column: string;
  present: number;
  verdicts: number;
  pass: number;
  fail: number;
  others: unknown[];
}

function tally(rows: readonly Json[], column: string): Tally {
  const t: Tally = { column, present: 0, verdicts: 0, pass: 0, fail: 0, others: [] };
  for (const row of rows) {
    const value = (row.meta as Json)[column];
    if (value === undefined || value === null || value === "") continue;
    t.present++;
    const verdict = parseLabel(value);
    if (verdict === undefined) {
      if (t.others.length < 3 && !t.others.some((o) => Object.is(o, value))) t.others.push(value);
    } else {
      t.verdicts++;
      if (verdict) t.pass++;
      else t.fail++;
    }
  }
  return t;
}

/** 0: every value a verdict, both classes; 1: every value a verdict; 2: most values verdicts; 3: not a verdict column. */
function tier(t: Tally): number {
  if (t.present === 0 || t.verdicts === 0) return 3;
  if (t.verdicts === t.present) return t.pass > 0 && t.fail > 0 ? 0 : 1;
  return t.verdicts * 2 >= t.present ? 2 : 3;
}

function show(value: unknown): string {
  return typeof value === "string"
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}…` : value)
    : String(value);
}

/**
 * Which column of this log is the verdict, for every row at once? The one
 * `mapping.label` names (as a column, a scorer, a named score), or else the
 * first of the tool's verdict columns whose every value is a verdict (both
 * classes preferred), or else the one with the most verdicts if they are the
 * majority; never a different column for different rows. Sets `label` on each
 * row, applies the rest of the mapping to `meta` columns (`cluster:
 * "metadata.image"`), and says what it chose and why (`LabelSource`). A named
 * column that is not in the log, or holds no verdict at all, is refused with
 * the columns there are.
 *
 * @example labelLog(lmEvalLog(samples)).label // { column: "bleu_acc", reason: "the first metric whose every value is a verdict", derived: ["bleu_max", …], choices: ["rouge1_acc"] }
 */
export function labelLog(
  log: LogRows,
  mapping: ColumnMapping = {},
): { rows: { line: number; row: unknown }[]; label?: LabelSource; warnings: ImportWarning[] } {
  const objects = log.rows.map((r) => r.row).filter((r): r is Json => isObject(r) && isObject(r.meta));
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of objects)
    for (const key of Object.keys(row.meta as Json))
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
  const find = (name: string) => spellings(name).find((c) => seen.has(c));
  const listed = (names: readonly string[]) => `[${names.map((c) => `'${c}'`).join(", ")}]`;
  const warnings = [...log.warnings];

  for (const field of FIELDS) {
    const given = mapping[field];
    if (given === undefined) continue;
    const column = find(given);
    if (column === undefined)
      throw new UnreadableFileError(
        `${field} column '${given}' is not a column of this ${log.tool}; its columns are ${listed(columns)}`,
      );
    for (const row of objects) {
      const value = (row.meta as Json)[column];
      if (field === "input") row.input = value;
      else if (field === "image") {
        const prompt = isObject(row.input) ? row.input.prompt : row.input;
        row.input = { prompt: typeof prompt === "string" ? prompt : "", image: value };
      } else row[field] = typeof value === "number" ? String(value) : value;
    }
  }

  const candidates = log.verdicts.filter((c) => seen.has(c)).map((c) => tally(objects, c));
  const usable = candidates.filter((t) => tier(t) < 3);
  let chosen: Tally | undefined;
  let reason: string;
  if (mapping.label !== undefined) {
    const column = find(mapping.label);
    const choices = usable.length ? usable.map((t) => t.column) : log.verdicts;
    if (column === undefined)
      throw new UnreadableFileError(
        `label column '${mapping.label}' is not a column of this ${log.tool}; verdict ${log.noun}s are ${listed(choices)}` +
          `${columns.length ? `, and its columns are ${listed(columns)}` : ""}`,
      );
    chosen = tally(objects, column);
    if (chosen.verdicts === 0)
      throw new UnreadableFileError(
        `label column '${column}' holds no pass/fail verdict${chosen.others.length ? ` (values like ${chosen.others.map(show).join(", ")})` : " (it is empty)"}; ` +
          `verdict ${log.noun}s of this ${log.tool} are ${listed(choices)}`,
      );
    reason = "named with --label";
  } else {
    const best = Math.min(...usable.map(tier), 3);
    chosen = usable.find((t) => tier(t) === best);
    reason =
      best < 2
        ? `the first ${log.noun} whose every value is a verdict${best === 1 ? " (all of one class)" : ""}`
        : `${chosen?.verdicts} of its ${chosen?.present} values are verdicts, the most of any ${log.noun}`;
  }
  if (!chosen) {
    if (objects.length)
      warnings.push({
        code: "no-label",
        message: candidates.length
          ? `no ${log.noun} of this ${log.tool} reads as a pass/fail verdict (${candidates
              .map((t) => `${t.column}: values like ${t.others.map(show).join(", ")}`)
              .join("; ")}); name the column that is with --label`
          : `this ${log.tool} has no ${log.noun} that could be a pass/fail verdict; name the column that is with --label`,
        count: objects.length,
      });
    return { rows: log.rows, warnings };
  }
  let unlabelled = 0;
  let missing = 0;
  for (const row of objects) {
    const value = (row.meta as Json)[chosen.column];
    const verdict = parseLabel(value);
    if (verdict !== undefined) row.label = verdict;
    else {
      unlabelled++;
      if (value === undefined || value === null || value === "") missing++;
    }
  }
  if (unlabelled)
    warnings.push({
      code: "unlabelled",
      message:
        `${unlabelled} case(s) have no verdict in '${chosen.column}', so no label` +
        ` (${[missing && `${missing} with no value there`, chosen.others.length && `others with ${chosen.others.map(show).join(", ")}`].filter(Boolean).join("; ")})`,
      count: unlabelled,
    });
  const label: LabelSource = {
    column: chosen.column,
    reason,
    derived: log.derived(chosen.column).filter((c) => seen.has(c)),
    choices: usable.map((t) => t.column).filter((c) => c !== chosen.column),
  };
  return { rows: log.rows, label, warnings };
}

/** "a list", "an object", … for messages about a whole file. */
export function kindOf(value: unknown): string {
  const d = describe(value);
  return d === "object" ? "an object" : `a ${d}`;
}
