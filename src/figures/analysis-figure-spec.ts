/**
 * The figure specs an analysis written by the judge (or the user) returns from
 * the locked sandbox, checked before anything is drawn from them. The sandbox
 * protocol (`src/agent/sandbox/protocol.ts`) checks its reply once, but a spec
 * reaches a figure again from a stored log, an imported report or a share
 * link, so the figure checks it itself: the same fields, the same bounds, and
 * per kind what the drawing needs (numbers where a scale needs numbers).
 * Every string stays text: it becomes a text node or a tip, which `toSvg` and
 * the page escape, never markup.
 */
import { decimal } from "./format.ts";
import type { SceneTable } from "./scene.ts";

/** The kinds a spec may name (the sandbox protocol's `FIGURE_KINDS`). */
export const ANALYSIS_FIGURE_KINDS = ["bar", "scatter", "line", "histogram"] as const;
export type AnalysisFigureKind = (typeof ANALYSIS_FIGURE_KINDS)[number];

/** What may cross, as the sandbox protocol bounds it (`SANDBOX_BOUNDS`): a spec beyond these is refused, not cut. */
export const ANALYSIS_FIGURE_BOUNDS = {
  /** Values in x (and in y). */
  points: 10_000,
  /** Characters in the title, an axis label or a category. */
  chars: 500,
  /** Bars or categories a figure names one by one (a bar figure, labelled bins, a line over categories). */
  categories: 50,
} as const;

/** A figure spec as the sandbox returns it: `x[i]` and `y[i]` are one point, bar or bin. */
export interface AnalysisFigureSpec {
  readonly kind: AnalysisFigureKind;
  readonly title: string;
  /** Categories (strings, or numbers read as names) or positions (numbers), per kind. */
  readonly x: readonly (number | string)[];
  readonly y: readonly number[];
  readonly xLabel?: string;
  readonly yLabel?: string;
}

function show(x: unknown): string {
  if (typeof x === "string") return JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x);
  if (typeof x === "number" || typeof x === "boolean" || x === null || x === undefined) return String(x);
  return Array.isArray(x) ? "an array" : typeof x;
}

/** The error every check throws: the function, the field, what was expected and what came. */
export function specError(fn: string, path: string, expected: string, got: string): TypeError {
  return new TypeError(`${fn}(): ${path} must be ${expected}, got ${got}`);
}

function text(fn: string, path: string, x: unknown): string {
  if (typeof x !== "string") throw specError(fn, path, "a string", show(x));
  if (x.length > ANALYSIS_FIGURE_BOUNDS.chars)
    throw specError(fn, path, `at most ${ANALYSIS_FIGURE_BOUNDS.chars} characters`, `${x.length} characters`);
  return x;
}

function values(fn: string, path: string, x: unknown): readonly unknown[] {
  if (!Array.isArray(x)) throw specError(fn, path, "an array", show(x));
  if (x.length > ANALYSIS_FIGURE_BOUNDS.points)
    throw specError(fn, path, `at most ${ANALYSIS_FIGURE_BOUNDS.points} values`, `${x.length} values`);
  return x;
}

/**
 * Is `x` a figure spec the figures can draw? Checks the shape the sandbox
 * protocol allows — `{ kind, title, x, y, xLabel?, yLabel? }` and nothing
 * else, x and y of the same length within the bounds, every y a finite
 * number, every x a finite number or a string — and returns it typed; throws
 * a TypeError naming `fn`, the field under `path` and what was expected.
 * What one kind needs beyond the shape (numbers for a scatter) is checked
 * where it is drawn (`analysisFigure`).
 *
 * @example checkAnalysisFigureSpec({ kind: "bar", title: "d by signal", x: ["a", "b"], y: [0.4] }, "A1 figures[0]")
 *   // throws TypeError: checkAnalysisFigureSpec(): A1 figures[0].y must be 2 values (one per x), got 1 value
 */
export function checkAnalysisFigureSpec(
  x: unknown,
  path = "figure",
  fn = "checkAnalysisFigureSpec",
): AnalysisFigureSpec {
  if (typeof x !== "object" || x === null || Array.isArray(x))
    throw specError(fn, path, "an object { kind, title, x, y }", show(x));
  const o = x as Record<string, unknown>;
  const allowed = ["kind", "title", "x", "y", "xLabel", "yLabel"];
  for (const key of Object.keys(o))
    if (!allowed.includes(key))
      throw specError(fn, `${path}.${key}`, `absent (allowed fields: ${allowed.join(", ")})`, show(o[key]));
  if (!ANALYSIS_FIGURE_KINDS.includes(o.kind as AnalysisFigureKind))
    throw specError(fn, `${path}.kind`, `one of ${ANALYSIS_FIGURE_KINDS.join(", ")}`, show(o.kind));
  const title = text(fn, `${path}.title`, o.title);
  const xs = values(fn, `${path}.x`, o.x).map((v, i) => {
    if (typeof v === "string") return text(fn, `${path}.x[${i}]`, v);
    if (typeof v === "number" && Number.isFinite(v)) return v;
    throw specError(fn, `${path}.x[${i}]`, "a finite number or a string", show(v));
  });
  const ys = values(fn, `${path}.y`, o.y).map((v, i) => {
    if (typeof v === "number" && Number.isFinite(v)) return v;
    throw specError(fn, `${path}.y[${i}]`, "a finite number", show(v));
  });
  if (xs.length !== ys.length)
    throw specError(
      fn,
      `${path}.y`,
      `${xs.length} value${xs.length === 1 ? "" : "s"} (one per x)`,
      `${ys.length} value${ys.length === 1 ? "" : "s"}`,
    );
  return {
    kind: o.kind as AnalysisFigureKind,
    title,
    x: xs,
    y: ys,
    ...(o.xLabel !== undefined ? { xLabel: text(fn, `${path}.xLabel`, o.xLabel) } : {}),
    ...(o.yLabel !== undefined ? { yLabel: text(fn, `${path}.yLabel`, o.yLabel) } : {}),
  };
}

const cellText = (v: unknown): string => {
  if (typeof v === "number") return Number.isFinite(v) ? decimal(v) : String(v);
  if (typeof v === "string") return v.length > ANALYSIS_FIGURE_BOUNDS.chars ? `${v.slice(0, 500)}…` : v;
  if (v === undefined) return "—";
  if (v === null || typeof v === "boolean") return String(v);
  return Array.isArray(v) ? "(an array)" : "(an object)";
};

/**
 * A spec's values as a table, whatever came: the figure's text alternative,
 * and what is still shown when the spec fails its check (a missing value
 * reads "—", an object "(an object)", at most `ANALYSIS_FIGURE_BOUNDS.points`
 * rows), so a figure that cannot be drawn still shows what the analysis said.
 *
 * @example analysisFigureTable({ kind: "bar", title: "d", x: ["a", "b"], y: [0.41] }).rows // [["a", "0.41"], ["b", "—"]]
 */
export function analysisFigureTable(x: unknown): SceneTable {
  const o = typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
  const list = (v: unknown) => (Array.isArray(v) ? v : []);
  const label = (v: unknown, otherwise: string) => (typeof v === "string" && v.trim() ? cellText(v) : otherwise);
  const xs = list(o.x);
  const ys = list(o.y);
  const n = Math.min(ANALYSIS_FIGURE_BOUNDS.points, Math.max(xs.length, ys.length));
  const title = label(o.title, "An analysis figure");
  const kind = typeof o.kind === "string" ? cellText(o.kind) : "figure";
  return {
    caption: `${title}: the ${kind} figure's values`,
    columns: [{ label: label(o.xLabel, "x") }, { label: label(o.yLabel, "y"), align: "right" }],
    rows: Array.from({ length: n }, (_, i) => [cellText(xs[i]), cellText(ys[i])]),
  };
}
