/**
 * The one narrow message shape that crosses into and out of the analysis
 * sandbox. In: the analysis code and the run's normalized exploration
 * records. Out: tables, figure specs, notes and suggested signals — nothing
 * else. Both directions are checked here, by the host, whatever the sandbox
 * (a locked worker in the page, a locked child process in Node) sent back:
 * a reply that does not have this shape is refused with the field that broke it.
 */

/** Bumped when a message's shape changes; every message carries it. */
export const SANDBOX_PROTOCOL = 1;

/** How much may cross, each way. A reply beyond these is refused, not truncated. */
export const SANDBOX_BOUNDS = {
  codeChars: 20_000,
  tables: 20,
  rowsPerTable: 1_000,
  columnsPerTable: 50,
  cellChars: 500,
  figures: 20,
  pointsPerFigure: 10_000,
  notes: 50,
  noteChars: 1_000,
  suggestions: 10,
  /** The reply as JSON text, before it is parsed. */
  replyChars: 2_000_000,
} as const;

/** A cell of a result table: JSON scalars only. */
export type Cell = string | number | boolean | null;

/** One exploration case as the analysis sees it. */
export interface AnalysisRecord {
  readonly id: string;
  readonly failed: boolean;
  readonly cluster?: string;
  readonly signals: Readonly<Record<string, Cell>>;
}

/** What the analysis code receives as `input`. */
export interface AnalysisInput {
  /** Always "explore": the sealed split never reaches the sandbox. */
  readonly split: "explore";
  readonly signals: readonly string[];
  readonly records: readonly AnalysisRecord[];
}

export interface SandboxRequest {
  readonly protocol: typeof SANDBOX_PROTOCOL;
  readonly kind: "run";
  readonly code: string;
  /** `input` as JSON text: the sandbox parses it in its own realm, so no host object crosses. */
  readonly input: string;
}

export interface AnalysisTable {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
}

export type FigureKind = "bar" | "scatter" | "line" | "histogram";
export const FIGURE_KINDS: readonly FigureKind[] = ["bar", "scatter", "line", "histogram"];

/** A figure as data: the host draws it (the sandbox draws nothing). */
export interface FigureSpec {
  readonly kind: FigureKind;
  readonly title: string;
  readonly x: readonly (number | string)[];
  readonly y: readonly number[];
  readonly xLabel?: string;
  readonly yLabel?: string;
}

/** A signal the analysis points at, with the direction it expects in failures: a candidate hypothesis for M3/M4. */
export interface Suggestion {
  readonly signal: string;
  readonly direction: 1 | -1;
  readonly why: string;
}

export interface AnalysisOutput {
  readonly tables: readonly AnalysisTable[];
  readonly figures: readonly FigureSpec[];
  readonly notes: readonly string[];
  readonly suggestions: readonly Suggestion[];
}

/** What a sandbox says it did: a checked output, or why not (the host's own failures use the same shape). */
export type SandboxOutcome =
  | { readonly ok: true; readonly output: AnalysisOutput; readonly ms: number }
  | {
      readonly ok: false;
      /** thrown: the code threw; refused: the request or reply broke the protocol; time/memory: a bound stopped it. */
      readonly reason: "thrown" | "refused" | "time" | "memory" | "crashed";
      readonly error: string;
      readonly ms: number;
    };

/** The runtimes an analysis can run in: a locked worker (page) or a locked child process (Node). */
export interface SandboxRunner {
  /** Names the runtime and its locks for the log, e.g. "node child (--experimental-permission, 64 MB, 2000 ms)". */
  readonly describe: string;
  run(request: SandboxRequest, options?: { readonly signal?: AbortSignal }): Promise<SandboxOutcome>;
}

function fail(path: string, expected: string, got: unknown): never {
  const shown =
    got === undefined
      ? "nothing"
      : typeof got === "string"
        ? JSON.stringify(got.slice(0, 40))
        : typeof got === "number" || typeof got === "boolean" || got === null
          ? String(got)
          : typeof got;
  return said(path, expected, Array.isArray(got) ? "an array" : shown);
}

/** Like `fail`, with the offending value already put in words ("21 entries"). */
function said(path: string, expected: string, words: string): never {
  throw new TypeError(`sandbox message: ${path} must be ${expected}, got ${words}`);
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function text(x: unknown, path: string, max: number): string {
  if (typeof x !== "string") fail(path, "a string", x);
  if (x.length > max) said(path, `at most ${max} characters`, `${x.length} characters`);
  return x;
}

function list(x: unknown, path: string, max: number): unknown[] {
  if (!Array.isArray(x)) fail(path, "an array", x);
  if (x.length > max) said(path, `at most ${max} entries`, `${x.length} entries`);
  return x;
}

function only(x: Record<string, unknown>, path: string, keys: readonly string[]): void {
  for (const key of Object.keys(x))
    if (!keys.includes(key)) fail(`${path}.${key}`, `absent (allowed fields: ${keys.join(", ")})`, x[key]);
}

function cell(x: unknown, path: string): Cell {
  if (x === null || typeof x === "boolean") return x;
  if (typeof x === "number") return Number.isFinite(x) ? x : said(path, "a finite number", String(x));
  if (typeof x === "string") return text(x, path, SANDBOX_BOUNDS.cellChars);
  return fail(path, "a string, finite number, boolean or null", x);
}

/**
 * Does the code fit the sandbox? Bounded length, and no `import` anywhere: dynamic `import()` is the one
 * way to load code that cannot be deleted from a global, so it is refused before anything runs.
 *
 * @example checkCode("return { tables: [] }") // "return { tables: [] }"
 */
export function checkCode(code: unknown): string {
  const source = text(code, "code", SANDBOX_BOUNDS.codeChars);
  const m = /\bimport\b/.exec(source);
  if (m) {
    const line = source.slice(0, m.index).split("\n").length;
    throw new TypeError(
      `sandbox message: code line ${line} uses 'import'; the sandbox loads no modules (compute from input.records)`,
    );
  }
  return source;
}

/**
 * Checks a request before it is sent: the protocol version, the code, and an input that is JSON text.
 * @example validateRequest({ protocol: 1, kind: "run", code: "return {}", input: "{}" }).kind // "run"
 */
export function validateRequest(x: unknown): SandboxRequest {
  if (!isRecord(x)) fail("request", "an object", x);
  only(x, "request", ["protocol", "kind", "code", "input"]);
  if (x.protocol !== SANDBOX_PROTOCOL) fail("request.protocol", String(SANDBOX_PROTOCOL), x.protocol);
  if (x.kind !== "run") fail("request.kind", '"run"', x.kind);
  const code = checkCode(x.code);
  if (typeof x.input !== "string") fail("request.input", "JSON text", x.input);
  return { protocol: SANDBOX_PROTOCOL, kind: "run", code, input: x.input };
}

/**
 * The request that runs `code` over `input` (the records as JSON text, `analysisInput(...).json`).
 * @example analysisRequest("return {}", "{}") // { protocol: 1, kind: "run", code: "return {}", input: "{}" }
 */
export function analysisRequest(code: string, input: string): SandboxRequest {
  return { protocol: SANDBOX_PROTOCOL, kind: "run", code, input };
}

/** A runtime started on one checked request: how to stop it, and how long the analysis has run so far. */
export interface StartedSandbox {
  stop(): void;
  ms(): number;
}

/**
 * What every runtime shares around one analysis: the request is checked before anything starts (a wrong one is
 * refused and nothing runs), `start` launches the runtime and hands over `settle`, the first outcome settled is
 * the one returned, the runtime is stopped right after it, and a cancel through `signal` settles as stopped.
 * `stopped` says how the runtime is stopped ("the worker was terminated"), for the messages.
 *
 * @example await runLocked(request, undefined, "the worker was terminated", (checked, settle) => ({ stop: () => worker.terminate(), ms: () => 0 }))
 */
export function runLocked(
  request: unknown,
  signal: AbortSignal | undefined,
  stopped: string,
  start: (checked: SandboxRequest, settle: (outcome: SandboxOutcome) => void) => StartedSandbox,
): Promise<SandboxOutcome> {
  let checked: SandboxRequest;
  try {
    checked = validateRequest(request);
  } catch (error) {
    return Promise.resolve({ ok: false, reason: "refused", error: (error as Error).message, ms: 0 });
  }
  return new Promise<SandboxOutcome>((resolve) => {
    let done = false;
    // Held in an object: settle may run while start is still running, before there is a handle.
    const runtime: { started?: StartedSandbox } = {};
    const settle = (outcome: SandboxOutcome) => {
      if (done) return;
      done = true;
      signal?.removeEventListener("abort", onAbort);
      runtime.started?.stop();
      resolve(outcome);
    };
    const onAbort = () =>
      settle({ ok: false, reason: "time", error: `cancelled: ${stopped}`, ms: runtime.started?.ms() ?? 0 });
    signal?.addEventListener("abort", onAbort);
    runtime.started = start(checked, settle);
    // A runtime that settled while starting is stopped now that there is a handle to stop it by.
    if (done) runtime.started.stop();
  });
}

/**
 * The outcome of an analysis stopped by its time budget.
 * @example overTime(2000, "the child was killed", 2003).error // "stopped: the analysis ran past its time budget of 2000 ms (the child was killed)"
 */
export function overTime(timeMs: number, stopped: string, ms: number): SandboxOutcome {
  return {
    ok: false,
    reason: "time",
    error: `stopped: the analysis ran past its time budget of ${timeMs} ms (${stopped})`,
    ms,
  };
}

function table(x: unknown, path: string): AnalysisTable {
  if (!isRecord(x)) fail(path, "an object {title, columns, rows}", x);
  only(x, path, ["title", "columns", "rows"]);
  const columns = list(x.columns, `${path}.columns`, SANDBOX_BOUNDS.columnsPerTable).map((c, i) =>
    text(c, `${path}.columns[${i}]`, SANDBOX_BOUNDS.cellChars),
  );
  const rows = list(x.rows, `${path}.rows`, SANDBOX_BOUNDS.rowsPerTable).map((row, r) => {
    const cells = list(row, `${path}.rows[${r}]`, SANDBOX_BOUNDS.columnsPerTable);
    if (cells.length !== columns.length)
      said(`${path}.rows[${r}]`, `${columns.length} cells (one per column)`, `${cells.length} cells`);
    return cells.map((c, k) => cell(c, `${path}.rows[${r}][${k}]`));
  });
  return { title: text(x.title, `${path}.title`, SANDBOX_BOUNDS.cellChars), columns, rows };
}

function figure(x: unknown, path: string): FigureSpec {
  if (!isRecord(x)) fail(path, "an object {kind, title, x, y}", x);
  only(x, path, ["kind", "title", "x", "y", "xLabel", "yLabel"]);
  if (!FIGURE_KINDS.includes(x.kind as FigureKind)) fail(`${path}.kind`, `one of ${FIGURE_KINDS.join(", ")}`, x.kind);
  const xs = list(x.x, `${path}.x`, SANDBOX_BOUNDS.pointsPerFigure).map((v, i) => {
    if (typeof v === "string") return text(v, `${path}.x[${i}]`, SANDBOX_BOUNDS.cellChars);
    if (typeof v === "number" && Number.isFinite(v)) return v;
    return fail(`${path}.x[${i}]`, "a finite number or a string", v);
  });
  const ys = list(x.y, `${path}.y`, SANDBOX_BOUNDS.pointsPerFigure).map((v, i) =>
    typeof v === "number" && Number.isFinite(v) ? v : fail(`${path}.y[${i}]`, "a finite number", v),
  );
  if (xs.length !== ys.length) said(`${path}.y`, `${xs.length} values (one per x)`, `${ys.length} values`);
  return {
    kind: x.kind as FigureKind,
    title: text(x.title, `${path}.title`, SANDBOX_BOUNDS.cellChars),
    x: xs,
    y: ys,
    ...(x.xLabel !== undefined ? { xLabel: text(x.xLabel, `${path}.xLabel`, SANDBOX_BOUNDS.cellChars) } : {}),
    ...(x.yLabel !== undefined ? { yLabel: text(x.yLabel, `${path}.yLabel`, SANDBOX_BOUNDS.cellChars) } : {}),
  };
}

function suggestion(x: unknown, path: string): Suggestion {
  if (!isRecord(x)) fail(path, "an object {signal, direction, why}", x);
  only(x, path, ["signal", "direction", "why"]);
  if (x.direction !== 1 && x.direction !== -1)
    fail(`${path}.direction`, "1 (higher in failures) or -1 (lower)", x.direction);
  return {
    signal: text(x.signal, `${path}.signal`, SANDBOX_BOUNDS.cellChars),
    direction: x.direction,
    why: text(x.why, `${path}.why`, SANDBOX_BOUNDS.noteChars),
  };
}

/**
 * Checks what the analysis returned: `{ tables?, figures?, notes?, suggestions? }` and nothing else.
 *
 * @example validateOutput({ tables: [{ title: "t", columns: ["a"], rows: [[1]] }] }).tables[0].rows // [[1]]
 */
export function validateOutput(x: unknown): AnalysisOutput {
  if (!isRecord(x)) fail("output", "an object {tables, figures, notes, suggestions} returned by the code", x);
  only(x, "output", ["tables", "figures", "notes", "suggestions"]);
  return {
    tables: list(x.tables ?? [], "output.tables", SANDBOX_BOUNDS.tables).map((t, i) => table(t, `output.tables[${i}]`)),
    figures: list(x.figures ?? [], "output.figures", SANDBOX_BOUNDS.figures).map((f, i) =>
      figure(f, `output.figures[${i}]`),
    ),
    notes: list(x.notes ?? [], "output.notes", SANDBOX_BOUNDS.notes).map((n, i) =>
      text(n, `output.notes[${i}]`, SANDBOX_BOUNDS.noteChars),
    ),
    suggestions: list(x.suggestions ?? [], "output.suggestions", SANDBOX_BOUNDS.suggestions).map((s, i) =>
      suggestion(s, `output.suggestions[${i}]`),
    ),
  };
}

/**
 * Reads what came back from a sandbox: JSON text `{ protocol, kind: "result", output }` or
 * `{ protocol, kind: "error", error }`. Anything else, or anything too long, is refused.
 *
 * @example readReply('{"protocol":1,"kind":"error","error":"x is not defined"}', 3) // { ok: false, reason: "thrown", error: "x is not defined", ms: 3 }
 */
export function readReply(raw: unknown, ms: number): SandboxOutcome {
  try {
    if (typeof raw !== "string") fail("reply", "JSON text", raw);
    if (raw.length > SANDBOX_BOUNDS.replyChars)
      said("reply", `at most ${SANDBOX_BOUNDS.replyChars} characters`, `${raw.length} characters`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      said("reply", "JSON text", "text that is not JSON");
    }
    if (!isRecord(parsed)) fail("reply", "an object", parsed);
    only(parsed, "reply", ["protocol", "kind", "output", "error"]);
    if (parsed.protocol !== SANDBOX_PROTOCOL) fail("reply.protocol", String(SANDBOX_PROTOCOL), parsed.protocol);
    if (parsed.kind === "error")
      return { ok: false, reason: "thrown", error: text(parsed.error, "reply.error", SANDBOX_BOUNDS.noteChars), ms };
    if (parsed.kind !== "result") fail("reply.kind", '"result" or "error"', parsed.kind);
    return { ok: true, output: validateOutput(parsed.output), ms };
  } catch (error) {
    return { ok: false, reason: "refused", error: (error as Error).message, ms };
  }
}
