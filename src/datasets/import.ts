import Papa from "papaparse";
import { parquetReadObjects } from "hyparquet";
import { concatBytes } from "../core/bytes.ts";
import type { CaseInput } from "../core/index.ts";
import { UnreadableFileError } from "./errors.ts";
import { decodeDataUrl, imageKey, sniffImage } from "./images.ts";
import { readInspectArchive } from "./inspect-eval.ts";
import { inspectJsonLog, isInspectJson } from "./inspect.ts";
import { parseJson } from "./json.ts";
import { chunks, readAll, readLines } from "./lines.ts";
import { isLmEvalResults, isLmEvalSample, lmEvalLog, lmEvalResultsError } from "./lm-eval.ts";
import { isObject, kindOf, labelLog, type Json, type LogRows } from "./logs.ts";
import { isPromptfoo, promptfooLog } from "./promptfoo.ts";
import { CASE_KEYS, rowToCase, type RowResult } from "./row.ts";
import { resolveMapping, tableRowToCase, type ResolvedMapping } from "./table.ts";
import type {
  ColumnMapping,
  ImportFormat,
  ImportOptions,
  ImportResult,
  ImportSource,
  ImportWarning,
  ImportedCase,
  LabelSource,
  Problem,
} from "./types.ts";
import { IMPORT_FORMATS } from "./types.ts";
import { isZip } from "./zip.ts";

export { UnreadableFileError } from "./errors.ts";

/**
 * A batch of an import in progress: the cases and problems of the rows read
 * since the last one, and, once known, the label's source and the file's
 * warnings (each said once, in whichever batch it became known).
 */
export interface ImportBatch {
  readonly cases: ImportedCase[];
  readonly problems: Problem[];
  readonly warnings?: ImportWarning[];
  readonly label?: LabelSource;
}

/** The log formats: a missing or placeholder image there is "no image", not a bad row (the log was scored without it). */
const LOG_FORMATS: readonly ImportFormat[] = ["inspect", "lm-eval", "promptfoo"];

/** What Inspect writes where an image was when it logs without images (`log_images=False`). */
const IMAGE_PLACEHOLDER = "<base64-data-removed>";

/**
 * Which format is this file? The content decides where it can: a zip is an
 * Inspect `.eval` archive, `PAR1` Parquet, lines that are each a JSON object
 * JSONL (lm-eval samples when they carry `doc_id` and responses), other JSON
 * `"json"` (whose shape then says Inspect, promptfoo or lm-eval); otherwise
 * the name (`.csv`/`.tsv`/`.txt`, `.parquet`, `.eval`, `.jsonl`), else CSV.
 *
 * @example detectFormat("samples_arc_easy_2024.json", '{"doc_id": 0, "resps": []}\n{"doc_id": 1, …') // "lm-eval"
 */
export function detectFormat(name: string | undefined, head: Uint8Array | string): ImportFormat | "json" {
  const lower = (name ?? "").toLowerCase().split(/[\\/]/).pop() ?? "";
  if (typeof head !== "string" && isZip(head)) return "inspect";
  const text = typeof head === "string" ? head : new TextDecoder().decode(head.subarray(0, 1 << 20));
  if (text.startsWith("PAR1") || /\.parquet$/.test(lower)) return "parquet";
  if (/\.eval$/.test(lower)) return "inspect";
  if (/\.(csv|tsv|txt)$/.test(lower)) return "csv";
  const body = text.replace(/^\uFEFF/, "").trimStart();
  const firstLine = body.split("\n", 1)[0]!.trim();
  const lmEvalLine = /"doc_id"\s*:/.test(firstLine) && /"(resps|filtered_resps|arguments|metrics)"\s*:/.test(firstLine);
  if (/\.(jsonl|ndjson)$/.test(lower)) return lmEvalLine || /^samples_/.test(lower) ? "lm-eval" : "jsonl";
  if (body.startsWith("{") && looksLikeJsonl(body)) return lmEvalLine ? "lm-eval" : "jsonl";
  if (/\.json$/.test(lower) || body.startsWith("{") || body.startsWith("[")) return "json";
  return "csv";
}

/** Is the first line a whole JSON object, followed by another line that starts one (or by nothing)? */
function looksLikeJsonl(body: string): boolean {
  const nl = body.indexOf("\n");
  if (nl < 0) return false;
  try {
    const first = parseJson(body.slice(0, nl));
    if (!isObject(first)) return false;
  } catch {
    return false;
  }
  const rest = body.slice(nl + 1).trimStart();
  return rest === "" || rest.startsWith("{");
}

/**
 * What cases does this file hold, and which rows are bad and why? Reads
 * JSONL, CSV, Parquet, lm-evaluation-harness samples, Inspect AI logs
 * (`.eval` and `.json`) and promptfoo results; keeps every valid row and
 * reports every other one with its line (row) number: not JSON, not an
 * object, missing input, duplicate id (naming the first line), unknown
 * status, image not found or not decodable, invalid UTF-8. JSON logs may
 * hold NaN and Infinity as Python writes them. Says, in `warnings`, what
 * the file lacks (no samples, a cancelled run, no verdict, one class only)
 * and, in `label`, which column the verdicts came from. Throws
 * `UnreadableFileError` only when the file as a whole cannot be read as its
 * format (not Parquet, not a log of that tool, an aggregate results file).
 *
 * @example const { cases, problems, warnings } = await importDataset(file.stream(), { name: file.name })
 */
export async function importDataset(source: ImportSource, options: ImportOptions = {}): Promise<ImportResult> {
  const cases: ImportedCase[] = [];
  const problems: Problem[] = [];
  const warnings: ImportWarning[] = [];
  let label: LabelSource | undefined;
  let format: ImportFormat = "jsonl";
  for await (const batch of importStream(source, options, (f) => (format = f))) {
    for (const c of batch.cases) cases.push(c);
    for (const p of batch.problems) problems.push(p);
    if (batch.warnings) warnings.push(...batch.warnings);
    if (batch.label) label = batch.label;
  }
  problems.sort((a, b) => a.line - b.line);
  return { format, cases, problems, rows: cases.length + problems.length, warnings, ...(label && { label }) };
}

/**
 * `importDataset` for JSONL text, bytes or a stream of chunks.
 *
 * @example (await parseJsonl('{"input":"hi"}\nnot json\n')).problems // [{ line: 2, reason: "not JSON: …" }]
 */
export function parseJsonl(source: ImportSource, options: Omit<ImportOptions, "format"> = {}): Promise<ImportResult> {
  return importDataset(source, { ...options, format: "jsonl" });
}

/** How many newlines `chunk` holds, counting no further than `max`. */
function newlines(chunk: Uint8Array | string, max: number): number {
  let n = 0;
  if (typeof chunk === "string")
    for (let at = chunk.indexOf("\n"); at >= 0 && n < max; at = chunk.indexOf("\n", at + 1)) n++;
  else for (let at = chunk.indexOf(10); at >= 0 && n < max; at = chunk.indexOf(10, at + 1)) n++;
  return n;
}

/** The first chunks of a source, enough to tell its format (the first line and the start of the next, or 1 MiB), and the whole source again. */
async function peek(
  source: ImportSource,
): Promise<{ head: Uint8Array | string; replay: AsyncIterable<Uint8Array | string> }> {
  const iterator = chunks(source)[Symbol.asyncIterator]();
  const seen: (Uint8Array | string)[] = [];
  let size = 0;
  let lines = 0;
  while (size < 1 << 20 && lines < 2) {
    const next = await iterator.next();
    if (next.done) break;
    seen.push(next.value);
    size += next.value.length;
    lines += newlines(next.value, 2 - lines);
  }
  const encoder = new TextEncoder();
  const head =
    seen.length === 0
      ? new Uint8Array()
      : seen.length === 1
        ? seen[0]!
        : seen.every((c) => typeof c === "string")
          ? seen.join("")
          : concatBytes(seen.map((c) => (typeof c === "string" ? encoder.encode(c) : c)));
  const replay: AsyncIterable<Uint8Array | string> = {
    async *[Symbol.asyncIterator]() {
      yield* seen;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    },
  };
  return { head, replay };
}

/**
 * `importDataset` as a stream of batches, for files too large to hold twice:
 * JSONL is read line by line and an Inspect `.eval` archive entry by entry
 * (holding only the rows each sample becomes, never the archive), and each
 * batch can be written to the store before the next is read. A log's rows
 * come in one batch once the whole log is read, because one label column is
 * chosen for the whole file; JSON documents and CSV are read whole.
 * Duplicate ids are caught across batches (only ids are remembered).
 * `onFormat` learns the format once it is known.
 *
 * @example for await (const { cases } of importStream(file.stream(), { name: file.name })) await store.addCases(id, cases)
 */
export async function* importStream(
  source: ImportSource,
  options: ImportOptions = {},
  onFormat?: (format: ImportFormat) => void,
): AsyncGenerator<ImportBatch> {
  if (options.format !== undefined && !IMPORT_FORMATS.includes(options.format))
    throw new UnreadableFileError(
      `unknown format '${String(options.format)}'; use one of ${IMPORT_FORMATS.join(", ")}`,
    );
  const { head, replay } = await peek(source);
  const detected = options.format ?? detectFormat(options.name, head);
  if (detected === "inspect" && typeof head !== "string" && isZip(head)) {
    onFormat?.("inspect");
    // Each sample's image is stored (or dropped) as its entry is read, so the rows held until the end keep a key, not the image.
    const resolve = imageResolver(options);
    const image = async (ref: string): Promise<string | undefined> => {
      if (options.skipImages) return undefined;
      if (!options.images || isPlaceholder(ref)) return ref;
      const found = await resolve(ref);
      return "key" in found ? found.key : ref;
    };
    yield* finish(one(logBatch(await readInspectArchive(replay, { image }), options)), options, true, resolve);
    return;
  }
  // One JSON list in a .jsonl file (lm-eval wrote its samples so before 2024), or an lm-eval document that is no
  // JSONL (an aggregate results file given as lm-eval), is read whole.
  const body = (typeof head === "string" ? head : new TextDecoder().decode(head)).replace(/^\uFEFF/, "").trimStart();
  const document =
    (detected === "jsonl" || detected === "lm-eval") &&
    (body.startsWith("[") || (detected === "lm-eval" && body.startsWith("{") && !looksLikeJsonl(body)));
  if (detected === "json" || detected === "inspect" || detected === "promptfoo" || document) {
    const read = readJsonFile(await readAll(replay), detected, options);
    onFormat?.(read.format);
    yield* finish(read.batches, options, LOG_FORMATS.includes(read.format));
    return;
  }
  onFormat?.(detected);
  switch (detected) {
    case "jsonl":
      yield* finish(jsonlBatches(replay, options), options, false);
      return;
    case "lm-eval":
      yield* finish(one(jsonlValues(replay).then((read) => lmEvalBatch(read, options))), options, true);
      return;
    case "csv":
      yield* finish(one(csvBatch(await readAll(replay), options)), options, false);
      return;
    case "parquet":
      yield* finish(one(await parquetBatch(await readAll(replay), options)), options, false);
      return;
  }
}

/** Rows whose validity is known, before duplicate and image checks (which need state across the file). */
interface RawBatch {
  readonly results: { readonly line: number; readonly result: RowResult }[];
  readonly problems: Problem[];
  readonly warnings?: ImportWarning[];
  readonly label?: LabelSource;
}

async function* one(batch: RawBatch | Promise<RawBatch>): AsyncGenerator<RawBatch> {
  yield await batch;
}

/** A log's rows as cases: one label column for the file (see `labelLog`), then each row checked like any dataset row. */
function logBatch(log: LogRows, options: ImportOptions): RawBatch {
  const labelled = labelLog(log, options.mapping);
  return {
    results: labelled.rows.map(({ line, row }) => ({ line, result: rowToCase(row, options) })),
    problems: log.problems,
    warnings: labelled.warnings,
    ...(labelled.label && { label: labelled.label }),
  };
}

/** A whole JSON file: an Inspect or promptfoo log, lm-eval samples (a list), a list of rows, or JSONL after all. */
function readJsonFile(
  bytes: Uint8Array,
  detected: ImportFormat | "json",
  options: ImportOptions,
): { format: ImportFormat; batches: AsyncIterable<RawBatch> } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UnreadableFileError("the JSON file is not valid UTF-8; re-save it as UTF-8");
  }
  text = text.replace(/^\uFEFF/, "");
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    // A .jsonl file that only started like a JSON list: its lines are read one by one after all.
    if (detected === "jsonl") return { format: "jsonl", batches: jsonlBatches(text, options) };
    // One JSON object per line in a file named .json (lm-eval wrote its samples so in 2024), too long a first line to tell from the head.
    if ((detected === "json" || detected === "lm-eval") && looksLikeJsonl(text.trimStart())) {
      const lmEval = isLmEvalSample(parseJson(text.trimStart().split("\n", 1)[0]!));
      return lmEval
        ? { format: "lm-eval", batches: one(jsonlValues(text).then((read) => lmEvalBatch(read, options))) }
        : { format: "jsonl", batches: jsonlBatches(text, options) };
    }
    throw new UnreadableFileError(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const log = (format: ImportFormat, rows: LogRows) => ({ format, batches: one(logBatch(rows, options)) });
  if (isLmEvalResults(value) && detected !== "inspect") throw lmEvalResultsError(value as Json, options.name);
  if (detected === "inspect") return log("inspect", inspectJsonLog(value));
  if (detected === "promptfoo") return log("promptfoo", promptfooLog(value));
  const list = Array.isArray(value) ? value : undefined;
  if (detected === "lm-eval" || (list ? list.some(isLmEvalSample) : isLmEvalSample(value)))
    return log("lm-eval", lmEvalLog((list ?? [value]).map((v, i) => ({ line: i + 1, value: v }))));
  if (isInspectJson(value)) return log("inspect", inspectJsonLog(value));
  if (isPromptfoo(value)) return log("promptfoo", promptfooLog(value));
  if (list)
    return {
      format: "jsonl",
      batches: jsonlBatches(
        list.map((v, i) => ({ line: i + 1, value: v })),
        options,
      ),
    };
  throw new UnreadableFileError(
    `this JSON is not a log this tool reads: it is ${kindOf(value)}${isObject(value) ? ` with keys [${Object.keys(value).slice(0, 8).join(", ")}]` : ""}. ` +
      "Expected an Inspect AI log ({eval, samples}, or a .eval archive), a promptfoo results file ({results: {results: [...]}}), " +
      "lm-eval samples (one {doc_id, …} per line, or a list of them), or a list of rows ([{...}, …])",
  );
}

/** Every line of a JSONL source parsed (NaN and Infinity included), and the lines that could not be. */
async function jsonlValues(
  source: ImportSource,
): Promise<{ values: { line: number; value: unknown }[]; problems: Problem[] }> {
  const values: { line: number; value: unknown }[] = [];
  const problems: Problem[] = [];
  for await (const batch of readLineValues(source))
    for (const v of batch) {
      if (v.value instanceof BadLine) problems.push({ line: v.line, reason: v.value.reason });
      else values.push(v);
    }
  return { values, problems };
}

/** lm-eval samples read from lines: the log's rows, with the lines that were not JSON as problems. */
function lmEvalBatch(
  read: { values: { line: number; value: unknown }[]; problems: Problem[] },
  options: ImportOptions,
): RawBatch {
  const log = lmEvalLog(read.values);
  return logBatch({ ...log, problems: [...read.problems, ...log.problems] }, options);
}

/** Problems of lines that are not JSON travel as values that no reader can take for a row. */
class BadLine {
  constructor(readonly reason: string) {}
}

function parseLine(l: { line: number; text?: string; error?: string }): unknown {
  if (l.error !== undefined) return new BadLine(l.error);
  if (l.text!.trim() === "") return undefined;
  try {
    return parseJson(l.text!);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return new BadLine(`not JSON (${shorten(detail)}); each line must be one JSON object`);
  }
}

/** How many rows decide a JSONL file's columns (the mapping), so the choice does not depend on how the stream is cut. */
const MAPPING_ROWS = 100;

/**
 * JSONL rows: in the dataset format (`id`, `input`, `expected`, `meta` …)
 * each is read as it is; rows that name their fields otherwise (`prompt`,
 * `passed`, a `--label` column) are mapped like table rows, by the mapping
 * resolved on the first rows.
 */
async function* jsonlBatches(
  source: ImportSource | readonly { line: number; value: unknown }[],
  options: ImportOptions,
): AsyncGenerator<RawBatch> {
  let mapping: ResolvedMapping | null | undefined;
  let label: LabelSource | undefined;
  let pending: { line: number; value: unknown }[] = [];
  let seen = 0;
  let labelSaid = false;
  const toBatch = (values: readonly { line: number; value: unknown }[]): RawBatch => {
    const results: RawBatch["results"] = [];
    const problems: Problem[] = [];
    for (const { line, value } of values) {
      if (value instanceof BadLine) problems.push({ line, reason: value.reason });
      else results.push({ line, result: mapping ? jsonlTableRow(value, mapping, options) : rowToCase(value, options) });
    }
    const say = label && !labelSaid;
    labelSaid ||= Boolean(label);
    return { results, problems, ...(say && { label }) };
  };
  const decide = () => {
    mapping = jsonlMapping(
      pending.map((p) => p.value).filter((v) => !(v instanceof BadLine)),
      options.mapping,
    );
    const column = mapping
      ? mapping.label
      : pending.some((p) => isObject(p.value) && "label" in p.value)
        ? "label"
        : undefined;
    if (column)
      label = {
        column,
        reason: options.mapping?.label ? "named with --label" : "detected by its name",
        derived: [],
        choices: [],
      };
  };
  // Rows already parsed (a JSON list of rows) come as one batch; a source is read line by line.
  const lists = Array.isArray(source)
    ? [source as { line: number; value: unknown }[]]
    : readLineValues(source as ImportSource);
  for await (const values of lists) {
    if (mapping === undefined) {
      pending.push(...values);
      seen += values.length;
      if (seen < MAPPING_ROWS) continue;
      decide();
      const batch = toBatch(pending);
      pending = [];
      yield batch;
      continue;
    }
    yield toBatch(values);
  }
  if (mapping === undefined) {
    decide();
    yield toBatch(pending);
  }
}

async function* readLineValues(source: ImportSource): AsyncGenerator<{ line: number; value: unknown }[]> {
  for await (const lines of readLines(source)) {
    const out: { line: number; value: unknown }[] = [];
    for (const l of lines) {
      const value = parseLine(l);
      if (value !== undefined) out.push({ line: l.line, value });
    }
    if (out.length) yield out;
  }
}

/**
 * The mapping for JSONL rows, or null when they are in the dataset format:
 * the dataset's own keys (`id`, `input`, …) map to themselves, other fields
 * are found by their common names as in CSV (`prompt`, `passed` …), and an
 * explicit mapping wins.
 */
function jsonlMapping(rows: readonly unknown[], explicit: ColumnMapping = {}): ResolvedMapping | null {
  const objects = rows.filter(isObject) as Json[];
  const columns = [...new Set(objects.flatMap((r) => Object.keys(r)))];
  const own: Record<string, string> = {};
  for (const field of ["id", "input", "expected", "label", "cluster", "split", "tags", "status"] as const)
    if (explicit[field] === undefined && columns.includes(field)) own[field] = field;
  const resolved = resolveMapping(columns, { ...own, ...explicit }, objects);
  const identity =
    Object.keys(explicit).length === 0 &&
    Object.entries(resolved).every(
      ([field, column]) => field === column && (CASE_KEYS as readonly string[]).includes(field),
    );
  return identity ? null : resolved;
}

/** A JSONL row mapped like a table row, its own `meta` object (if any) kept as meta. */
function jsonlTableRow(row: unknown, mapping: ResolvedMapping, options: ImportOptions): RowResult {
  if (!isObject(row)) return rowToCase(row, options);
  const { meta, ...rest } = row;
  const withMeta = isObject(meta) ? rest : row;
  const result = tableRowToCase(withMeta, mapping, { requireInput: options.requireInput ?? true });
  if ("case" in result && isObject(meta)) return { case: { ...result.case, meta: { ...meta, ...result.case.meta } } };
  return result;
}

function csvBatch(bytes: Uint8Array, options: ImportOptions): RawBatch {
  // Lines that are not valid UTF-8 are found on the raw bytes first, so the
  // record that holds one is named instead of carrying replacement characters.
  const badLines = invalidUtf8Lines(bytes);
  let text = new TextDecoder("utf-8").decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // One newline convention, so a file mixing CRLF and LF splits at every line.
  text = text.replace(/\r\n/g, "\n");
  const records: { fields: string[]; start: number; end: number; error?: string }[] = [];
  let line = 1;
  let counted = 0;
  const lineAt = (position: number) => {
    // Positions only grow, so counting newlines since the last call is linear overall.
    for (; counted < position && counted < text.length; counted++) if (text.charCodeAt(counted) === 10) line++;
    return line;
  };
  let cursor = 0;
  Papa.parse<string[]>(text, {
    delimiter: options.delimiter ?? "",
    newline: "\n",
    skipEmptyLines: false,
    step(results) {
      const start = lineAt(cursor);
      const end = lineAt(Math.max(cursor, results.meta.cursor - 1));
      cursor = results.meta.cursor;
      const error = results.errors.find((e) => e.type !== "Delimiter");
      records.push({ fields: results.data, start, end, ...(error && { error: `${error.message} (${error.code})` }) });
    },
  });
  const header = records.shift();
  if (!header || (header.fields.length === 1 && header.fields[0] === "")) return { results: [], problems: [] };
  const names = uniqueNames(header.fields.map((f) => f.trim()));
  const rows: Record<string, unknown>[] = [];
  const lines: number[] = [];
  const problems: Problem[] = [];
  for (const r of records) {
    if (r.fields.length === 1 && r.fields[0]!.trim() === "" && !r.error) continue;
    let bad = false;
    for (let l = r.start; l <= r.end && !bad; l++) bad = badLines.has(l);
    if (bad) problems.push({ line: r.start, reason: "not valid UTF-8; re-save the file as UTF-8" });
    else if (r.error) problems.push({ line: r.start, reason: `not a CSV record: ${r.error}` });
    else if (r.fields.length !== names.length)
      problems.push({
        line: r.start,
        reason: `has ${r.fields.length} fields where the header has ${names.length}; quote fields that contain the delimiter`,
      });
    else {
      rows.push(Object.fromEntries(names.map((name, i) => [name, r.fields[i]])));
      lines.push(r.start);
    }
  }
  return tableBatch(rows, lines, options, problems, true);
}

async function parquetBatch(bytes: Uint8Array, options: ImportOptions): Promise<RawBatch> {
  let rows: Record<string, unknown>[];
  try {
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
  } catch (error) {
    throw new UnreadableFileError(
      `not a readable Parquet file: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return tableBatch(
    rows.map((r) => plain(r) as Record<string, unknown>),
    rows.map((_, i) => i + 1),
    options,
    [],
  );
}

function tableBatch(
  rows: Record<string, unknown>[],
  lines: number[],
  options: ImportOptions,
  problems: Problem[],
  numericMeta = false,
): RawBatch {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const mapping = resolveMapping(columns, options.mapping, rows);
  const requireInput = options.requireInput ?? true;
  const results = rows.map((row, i) => ({
    line: lines[i]!,
    result: tableRowToCase(row, mapping, { numericMeta, requireInput }),
  }));
  const label: LabelSource | undefined = mapping.label
    ? {
        column: mapping.label,
        reason: options.mapping?.label ? "named with --label" : "detected by its name",
        derived: [],
        choices: [],
      }
    : undefined;
  return { results, problems, ...(label && { label }) };
}

/** Is this image reference what a log writes where there was an image it did not keep? */
function isPlaceholder(ref: string): boolean {
  return ref === IMAGE_PLACEHOLDER || ref.startsWith("attachment://");
}

/**
 * Duplicate ids and images: checks that need what came before in the file;
 * then what the file as a whole lacks (no rows, one class only, images a log
 * did not keep). In a log (`logImages`), an image that is a placeholder or
 * cannot be found makes a case with no image, counted in one warning: the
 * log's verdict does not depend on having the image back.
 */
async function* finish(
  batches: AsyncIterable<RawBatch>,
  options: ImportOptions,
  logImages: boolean,
  resolveImage: ImageResolver = imageResolver(options),
): AsyncGenerator<ImportBatch> {
  const firstLine = new Map<string, number>();
  let rows = 0;
  let pass = 0;
  let fail = 0;
  let noSamples = false;
  let label: LabelSource | undefined;
  const dropped = { placeholder: 0, missing: 0, example: "" };
  const withoutImage = (c: ImportedCase): RowResult => {
    const { image: _image, ...input } = c.input;
    return { case: { ...c, input } };
  };
  for await (const batch of batches) {
    const cases: ImportedCase[] = [];
    const problems = [...batch.problems];
    if (batch.warnings?.some((w) => w.code === "no-samples")) noSamples = true;
    if (batch.label) label = batch.label;
    const image = (result: RowResult) => ("case" in result ? result.case.input.image : undefined);
    const checks = (result: RowResult) =>
      image(result) !== undefined &&
      (Boolean(options.images) || options.skipImages || (logImages && isPlaceholder(image(result)!)));
    // Only rows with an image wait on anything: the rest pass through without a promise each.
    const resolved: RowResult[] = batch.results.some((r) => checks(r.result))
      ? await Promise.all(
          batch.results.map(async ({ result }) => {
            if (!checks(result) || !("case" in result)) return result;
            const ref = result.case.input.image!;
            if (options.skipImages) return withoutImage(result.case);
            if (logImages && isPlaceholder(ref)) {
              dropped.placeholder++;
              return withoutImage(result.case);
            }
            const found = await resolveImage(ref);
            if ("reason" in found) {
              if (!logImages) return { reason: found.reason, id: result.case.id };
              dropped.missing++;
              dropped.example ||= found.reason;
              return withoutImage(result.case);
            }
            const input: CaseInput = { ...result.case.input, image: found.key };
            return { case: { ...result.case, input } };
          }),
        )
      : batch.results.map((r) => r.result);
    resolved.forEach((result, i) => {
      const line = batch.results[i]!.line;
      if (!("case" in result)) {
        problems.push({ line, reason: result.reason, ...(result.id !== undefined && { id: result.id }) });
        return;
      }
      const first = firstLine.get(result.case.id);
      if (first !== undefined) {
        problems.push({
          line,
          reason: `duplicate id '${result.case.id}' (first on line ${first})`,
          id: result.case.id,
        });
        return;
      }
      firstLine.set(result.case.id, line);
      if (result.case.label === true) pass++;
      else if (result.case.label === false) fail++;
      cases.push(result.case);
    });
    rows += cases.length + problems.length;
    yield {
      cases,
      problems,
      ...(batch.warnings?.length && { warnings: batch.warnings }),
      ...(batch.label && { label: batch.label }),
    };
  }
  const warnings: ImportWarning[] = [];
  if (rows === 0 && !noSamples) warnings.push({ code: "empty", message: "the file holds no rows", count: 0 });
  if (dropped.placeholder + dropped.missing)
    warnings.push({
      code: "no-image",
      message:
        `${dropped.placeholder + dropped.missing} case(s) kept with no image: ` +
        [
          dropped.placeholder &&
            `${dropped.placeholder} had a placeholder where the image was (the log was written without images, e.g. log_images=False)`,
          dropped.missing && `${dropped.missing} named an image that could not be used (first: ${dropped.example})`,
        ]
          .filter(Boolean)
          .join("; "),
      count: dropped.placeholder + dropped.missing,
    });
  if (label && pass + fail > 0 && (pass === 0 || fail === 0))
    warnings.push({
      code: "one-class",
      message:
        fail === 0
          ? `every labelled case passes (${pass} by '${label.column}'): there is no failure to explain`
          : `every labelled case fails (${fail} by '${label.column}'): nothing distinguishes failures from passes`,
      count: pass + fail,
    });
  if (warnings.length) yield { cases: [], problems: [], warnings };
}

/** Where an image reference leads: the store key of its bytes, or why there is none. */
type ImageResolver = (ref: string) => Promise<{ key: string } | { reason: string }>;

/**
 * One resolver per import: each image is read, checked and stored once.
 * Outcomes are remembered by reference (a big dataset repeats a few paths
 * many times), except for `data:` URLs, which are decoded each time rather
 * than kept as keys of a cache (a log with thousands of inline images would
 * hold them all); the store still gets each image once.
 */
function imageResolver(options: ImportOptions): ImageResolver {
  const stored = new Set<string>();
  const cache = new Map<string, Promise<{ key: string } | { reason: string }>>();
  return (ref) => {
    if (ref.startsWith("data:")) return loadImage(ref, options, stored);
    let found = cache.get(ref);
    if (!found) {
      found = loadImage(ref, options, stored);
      cache.set(ref, found);
    }
    return found;
  };
}

async function loadImage(
  ref: string,
  options: ImportOptions,
  stored: Set<string>,
): Promise<{ key: string } | { reason: string }> {
  let bytes: Uint8Array | undefined;
  if (ref.startsWith("data:")) {
    const decoded = decodeDataUrl(ref);
    if (!(decoded instanceof Uint8Array)) return { reason: `image is ${decoded.reason}` };
    bytes = decoded;
  } else if (/^sha256:[0-9a-f]{64}$/.test(ref)) {
    return { key: ref };
  } else {
    try {
      bytes = await options.images!.read(ref);
    } catch (error) {
      return { reason: `image '${ref}' could not be read: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (!bytes) return { reason: `image not found: '${ref}' (paths are relative to the dataset file)` };
  }
  const sniffed = sniffImage(bytes);
  if ("reason" in sniffed) return { reason: `image '${shorten(ref)}' is not decodable: ${sniffed.reason}` };
  const key = imageKey(bytes);
  if (!stored.has(key) && options.images!.put) {
    stored.add(key);
    await options.images!.put(key, bytes, sniffed.type);
  }
  return { key };
}

/** Line numbers (1-based) whose bytes are not valid UTF-8. */
function invalidUtf8Lines(bytes: Uint8Array): Set<number> {
  const bad = new Set<number>();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    decoder.decode(bytes);
    return bad;
  } catch {
    // Some line is bad: find which.
  }
  let start = 0;
  let line = 1;
  while (start <= bytes.length) {
    let nl = bytes.indexOf(10, start);
    if (nl < 0) nl = bytes.length;
    try {
      decoder.decode(bytes.subarray(start, nl));
    } catch {
      bad.add(line);
    }
    start = nl + 1;
    line++;
  }
  return bad;
}

/**
 * The column names a CSV header gives the importer: empty ones numbered
 * (`column_3`), repeated ones suffixed (`a`, `a_2`), so every column keeps a name of its own.
 *
 * @example uniqueNames(["a", "", "a"]) // ["a", "column_2", "a_2"]
 */
export function uniqueNames(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name, i) => {
    const base = name || `column_${i + 1}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base}_${count}`;
  });
}

/** Parquet values as plain JSON data: int64 as numbers (or strings past 2^53), dates as ISO strings. */
function plain(value: unknown): unknown {
  if (typeof value === "bigint")
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  if (typeof value === "number" && !Number.isFinite(value)) return null;
  return value;
}

function shorten(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}
