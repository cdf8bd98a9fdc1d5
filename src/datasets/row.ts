import type { CaseInput, CaseStatus } from "../core/index.ts";
import { derivedId } from "./identity.ts";
import type { ImportedCase } from "./types.ts";

/** The fields a dataset row may carry at its top level; anything else goes to `meta`. */
export const CASE_KEYS = ["id", "input", "expected", "tags", "split", "cluster", "status", "meta", "label"] as const;
const CASE_KEY_SET: ReadonlySet<string> = new Set(CASE_KEYS);

/** Deepest nesting a row may hold (objects and lists inside each other); deeper is a problem of that row. */
export const MAX_JSON_DEPTH = 64;

/**
 * Is this parsed JSON value nested deeper than `max` levels? Walks with its
 * own stack, so a 100,000-deep value (which `JSON.parse` reads, but writing
 * or hashing it recursively would overflow the call stack) is measured safely.
 *
 * @example deeperThan(JSON.parse("[[[1]]]"), 2) // true
 */
export function deeperThan(value: unknown, max: number): boolean {
  // Recursion here is bounded by `max`: it stops at the first level past it, so a deep value cannot overflow.
  return value !== null && typeof value === "object" && exceeds(value, max);
}

/** Does this object hold more than `levels` levels, itself included? */
function exceeds(value: object, levels: number): boolean {
  if (levels < 1) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (child !== null && typeof child === "object" && exceeds(child, levels - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const child: unknown = (value as Record<string, unknown>)[key];
    if (child !== null && typeof child === "object" && exceeds(child, levels - 1)) return true;
  }
  return false;
}

/**
 * Sets `record[key]` as plain data, whatever the key: a column or field named
 * `__proto__` (or `constructor`) is kept as a field like any other, never
 * taken as the object's prototype.
 *
 * @example setField({}, "__proto__", 1) // { ["__proto__"]: 1 } as an own field
 */
export function setField(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A row turned into a case, or the reason it could not be. */
export type RowResult = { readonly case: ImportedCase } | { readonly reason: string; readonly id?: string };

/**
 * Can this parsed row (one JSONL line, or a table row already mapped onto
 * case fields) be a case? Checks each field against the dataset format and
 * says exactly which one is wrong. Keys outside the format are kept in `meta`.
 *
 * @example rowToCase({ input: "2+2?", expected: "4" }) // { case: { id: "…", input: { prompt: "2+2?" }, … } }
 */
export function rowToCase(row: unknown, options: { readonly requireInput?: boolean } = {}): RowResult {
  if (row === null || typeof row !== "object" || Array.isArray(row))
    return { reason: `not an object (a ${describe(row)}); each line must be a JSON object like {"input": "…"}` };
  if (deeperThan(row, MAX_JSON_DEPTH))
    return { reason: `nested deeper than ${MAX_JSON_DEPTH} levels (objects or lists inside each other); flatten it` };
  const r = row as Record<string, unknown>;
  const rawId = r.id;
  let id: string | undefined;
  if (typeof rawId === "string" && rawId !== "") id = rawId;
  else if (typeof rawId === "number" && Number.isFinite(rawId)) id = String(rawId);
  else if (rawId !== undefined && rawId !== null && rawId !== "")
    return { reason: `id must be a string or a number, got a ${describe(rawId)}` };

  const absent = r.input === undefined || r.input === null || r.input === "";
  const input = absent && options.requireInput === false ? { prompt: "" } : toInput(r.input);
  if (typeof input === "string") return { reason: input, ...(id !== undefined && { id }) };
  id ??= derivedId(input);
  const fail = (reason: string): RowResult => ({ reason, id });

  let tags: string[] = [];
  if (r.tags !== undefined && r.tags !== null) {
    if (typeof r.tags === "string")
      tags = r.tags
        .split(/[,;|]/)
        .map((t) => t.trim())
        .filter(Boolean);
    else if (Array.isArray(r.tags) && r.tags.every((t) => typeof t === "string")) tags = [...r.tags];
    else return fail(`tags must be a list of strings, got a ${describe(r.tags)}`);
  }
  const split = toLabel(r.split);
  if (split === null) return fail(`split must be a string, got a ${describe(r.split)}`);
  const cluster = toLabel(r.cluster);
  if (cluster === null) return fail(`cluster must be a string, got a ${describe(r.cluster)}`);
  let status: CaseStatus = "active";
  if (r.status !== undefined && r.status !== null && r.status !== "") {
    if (r.status !== "active" && r.status !== "archived")
      return fail(`unknown status ${JSON.stringify(r.status)}; expected "active" or "archived"`);
    status = r.status;
  }
  let meta: Record<string, unknown> = {};
  if (r.meta !== undefined && r.meta !== null) {
    if (typeof r.meta !== "object" || Array.isArray(r.meta))
      return fail(`meta must be an object, got a ${describe(r.meta)}`);
    meta = { ...(r.meta as Record<string, unknown>) };
  }
  for (const key of Object.keys(r)) if (!CASE_KEY_SET.has(key)) setField(meta, key, r[key]);
  let label: boolean | undefined;
  if (r.label !== undefined && r.label !== null && r.label !== "") {
    label = parseLabel(r.label);
    if (label === undefined) {
      // Not a verdict (e.g. a class name): keep it as data rather than drop it.
      meta = { ...meta, label: r.label };
    }
  }
  // Built by assignment in the fields' order rather than with conditional spreads: a spread per optional
  // field made each case several times slower to build and, later, to copy.
  const c = { id, input } as { -readonly [K in keyof ImportedCase]: ImportedCase[K] };
  if (r.expected !== undefined) c.expected = r.expected;
  c.tags = tags;
  if (split !== undefined) c.split = split;
  if (cluster !== undefined) c.cluster = cluster;
  c.status = status;
  c.meta = meta;
  if (label !== undefined) c.label = label;
  return { case: c };
}

function toInput(value: unknown): CaseInput | string {
  if (value === undefined || value === null || value === "")
    return 'missing input; give "input": "<prompt>" or {"prompt": "…", "image": "…"}';
  if (typeof value === "string") return { prompt: value };
  if (typeof value !== "object" || Array.isArray(value))
    return `input must be a string or {"prompt", "image"}, got a ${describe(value)}`;
  const v = value as Record<string, unknown>;
  if (typeof v.prompt !== "string") return `input.prompt must be a string, got a ${describe(v.prompt)}`;
  if (v.image !== undefined && v.image !== null && typeof v.image !== "string")
    return `input.image must be a path or a data URL (a string), got a ${describe(v.image)}`;
  return typeof v.image === "string" && v.image !== "" ? { prompt: v.prompt, image: v.image } : { prompt: v.prompt };
}

/** undefined when absent, null when of the wrong type. */
function toLabel(value: unknown): string | undefined | null {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

const PASS = new Set(["pass", "passed", "true", "yes", "y", "1", "c", "correct", "ok", "success", "t"]);
const FAIL = new Set(["fail", "failed", "false", "no", "n", "0", "i", "incorrect", "wrong", "failure", "f", "error"]);

/**
 * Is this value a pass/fail verdict, and which? Booleans, 1/0, and the words
 * tools write (pass/fail, C/I as Inspect scores, yes/no, correct/incorrect).
 * Returns undefined for anything else (e.g. a partial score of 0.5).
 *
 * @example parseLabel("C") // true
 */
export function parseLabel(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value === 1 ? true : value === 0 ? false : undefined;
  if (typeof value === "string") {
    const v = value.trim().toLowerCase();
    if (PASS.has(v)) return true;
    if (FAIL.has(v)) return false;
    const n = Number(v);
    if (v !== "" && Number.isFinite(n)) return n === 1 ? true : n === 0 ? false : undefined;
  }
  return undefined;
}

/** "string", "number", "array", "null" … for messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  return typeof value;
}
