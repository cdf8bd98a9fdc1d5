import Papa from "papaparse";
import { parquetReadObjects } from "hyparquet";
import type { CaseInput } from "../core/index.ts";
import { decodeDataUrl, imageKey, sniffImage } from "./images.ts";
import { chunks, readAll, readLines } from "./lines.ts";
import { inspectRows, lmEvalRow, promptfooRows } from "./logs.ts";
import { rowToCase, type RowResult } from "./row.ts";
import { resolveMapping, tableRowToCase } from "./table.ts";
import type { ImportFormat, ImportOptions, ImportResult, ImportSource, ImportedCase, Problem } from "./types.ts";
import { IMPORT_FORMATS } from "./types.ts";

/** A batch of an import in progress: the cases and problems of the rows read since the last one. */
export interface ImportBatch {
  readonly cases: ImportedCase[];
  readonly problems: Problem[];
}

/** Thrown when a file cannot be read as the format at all (as opposed to bad rows in it). */
export class UnreadableFileError extends Error {
  override readonly name = "UnreadableFileError";
}

/**
 * Which format is this file? The option when given; else the file name
 * (`samples_*.jsonl` → lm-eval, `.jsonl`/`.ndjson`, `.csv`/`.tsv`, `.parquet`,
 * `.json` → Inspect or promptfoo by content); else the first bytes.
 *
 * @example detectFormat("samples_arc_easy_2024.jsonl", bytes) // "lm-eval"
 */
export function detectFormat(name: string | undefined, head: Uint8Array | string): ImportFormat | "json" {
  const lower = (name ?? "").toLowerCase().split(/[\\/]/).pop() ?? "";
  if (/^samples_.*\.jsonl$/.test(lower)) return "lm-eval";
  if (/\.(jsonl|ndjson)$/.test(lower)) return "jsonl";
  if (/\.(csv|tsv|txt)$/.test(lower)) return "csv";
  if (/\.parquet$/.test(lower)) return "parquet";
  if (/\.json$/.test(lower)) return "json";
  const text = typeof head === "string" ? head : new TextDecoder().decode(head.subarray(0, 4096));
  if (text.startsWith("PAR1")) return "parquet";
  const first = text.replace(/^\uFEFF/, "").trimStart();
  if (first.startsWith("{")) {
    const line = first.split("\n", 1)[0]!;
    if (/"doc_id"\s*:/.test(line) && /"(resps|filtered_resps|arguments)"\s*:/.test(line)) return "lm-eval";
    try {
      JSON.parse(line);
      return "jsonl";
    } catch {
      return "json";
    }
  }
  return "csv";
}

/**
 * What cases does this file hold, and which rows are bad and why? Reads
 * JSONL, CSV, Parquet, lm-evaluation-harness samples, Inspect AI logs and
 * promptfoo results; keeps every valid row and reports every other one with
 * its line (row) number: not JSON, not an object, missing input, duplicate id
 * (naming the first line), unknown status, image not found or not decodable,
 * invalid UTF-8. Throws `UnreadableFileError` only when the file as a whole
 * cannot be read as its format (not Parquet, not a log of that tool).
 *
 * @example const { cases, problems } = await importDataset(file.stream(), { name: file.name })
 */
export async function importDataset(source: ImportSource, options: ImportOptions = {}): Promise<ImportResult> {
  const cases: ImportedCase[] = [];
  const problems: Problem[] = [];
  let format: ImportFormat = "jsonl";
  for await (const batch of importStream(source, options, (f) => (format = f))) {
    for (const c of batch.cases) cases.push(c);
    for (const p of batch.problems) problems.push(p);
  }
  problems.sort((a, b) => a.line - b.line);
  return { format, cases, problems, rows: cases.length + problems.length };
}

/**
 * `importDataset` for JSONL text, bytes or a stream of chunks.
 *
 * @example (await parseJsonl('{"input":"hi"}\nnot json\n')).problems // [{ line: 2, reason: "not JSON: …" }]
 */
export function parseJsonl(source: ImportSource, options: Omit<ImportOptions, "format"> = {}): Promise<ImportResult> {
  return importDataset(source, { ...options, format: "jsonl" });
}

/**
 * `importDataset` as a stream of batches, for files too large to hold twice:
 * JSONL and lm-eval samples are read line by line from the stream and each
 * batch can be written to the store before the next is read. Duplicate ids
 * are caught across batches (only ids are remembered). `onFormat` learns the
 * format once it is known.
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
  // Peek at the first chunk for format detection, then put it back.
  const iterator = chunks(source)[Symbol.asyncIterator]();
  const first = await iterator.next();
  const head = first.done ? new Uint8Array() : first.value;
  const replay: AsyncIterable<Uint8Array | string> = {
    async *[Symbol.asyncIterator]() {
      if (!first.done) yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    },
  };
  let format = options.format ?? detectFormat(options.name, head);
  if (format === "json" || format === "inspect" || format === "promptfoo") {
    const parsed = parseJsonFile(await readAll(replay));
    // A bare `.json` says which tool wrote it only in its content.
    if (format === "json") format = isInspect(parsed) ? "inspect" : "promptfoo";
    onFormat?.(format);
    yield* finish(rowsToBatch(format === "inspect" ? inspectRows(parsed) : promptfooRows(parsed), options), options);
    return;
  }
  onFormat?.(format);
  switch (format) {
    case "jsonl":
    case "lm-eval":
      yield* finish(jsonlBatches(replay, format === "lm-eval", options), options);
      return;
    case "csv":
      yield* finish(one(csvBatch(await readAll(replay), options)), options);
      return;
    case "parquet":
      yield* finish(one(await parquetBatch(await readAll(replay), options)), options);
      return;
  }
}

/** Rows whose validity is known, before duplicate and image checks (which need state across the file). */
interface RawBatch {
  readonly results: { readonly line: number; readonly result: RowResult }[];
  readonly problems: Problem[];
}

async function* one(batch: RawBatch): AsyncGenerator<RawBatch> {
  yield batch;
}

async function* rowsToBatch(rows: unknown[], options: ImportOptions): AsyncGenerator<RawBatch> {
  yield { results: rows.map((row, i) => ({ line: i + 1, result: rowToCase(row, options) })), problems: [] };
}

async function* jsonlBatches(
  source: AsyncIterable<Uint8Array | string>,
  lmEval: boolean,
  options: ImportOptions,
): AsyncGenerator<RawBatch> {
  for await (const lines of readLines(source)) {
    const results: RawBatch["results"] = [];
    const problems: Problem[] = [];
    for (const l of lines) {
      if (l.error !== undefined) {
        problems.push({ line: l.line, reason: l.error });
        continue;
      }
      if (l.text.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(l.text);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        problems.push({ line: l.line, reason: `not JSON (${shorten(detail)}); each line must be one JSON object` });
        continue;
      }
      results.push({ line: l.line, result: rowToCase(lmEval ? lmEvalRow(value) : value, options) });
    }
    yield { results, problems };
  }
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
  return { results, problems };
}

/** Duplicate ids and images: checks that need what came before in the file. */
async function* finish(batches: AsyncIterable<RawBatch>, options: ImportOptions): AsyncGenerator<ImportBatch> {
  const firstLine = new Map<string, number>();
  const storedImages = new Set<string>();
  const imageCache = new Map<string, Promise<{ key: string } | { reason: string }>>();
  const resolveImage = (ref: string) => {
    let found = imageCache.get(ref);
    if (!found) {
      found = loadImage(ref, options, storedImages);
      // Keep only outcomes (not bytes): a big dataset repeats a few images many times.
      imageCache.set(ref, found);
    }
    return found;
  };
  for await (const batch of batches) {
    const cases: ImportedCase[] = [];
    const problems = [...batch.problems];
    const withImage = (result: RowResult) =>
      !!options.images && "case" in result && result.case.input.image !== undefined;
    // Only rows with an image wait on anything: the rest pass through without a promise each.
    const resolved: RowResult[] = batch.results.some((r) => withImage(r.result))
      ? await Promise.all(
          batch.results.map(async ({ result }) => {
            if (!withImage(result) || !("case" in result)) return result;
            const image = await resolveImage(result.case.input.image!);
            if ("reason" in image) return { reason: image.reason, id: result.case.id };
            const input: CaseInput = { ...result.case.input, image: image.key };
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
      cases.push(result.case);
    });
    yield { cases, problems };
  }
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

function parseJsonFile(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UnreadableFileError("the JSON file is not valid UTF-8; re-save it as UTF-8");
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new UnreadableFileError(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function isInspect(value: unknown): boolean {
  return value !== null && typeof value === "object" && "eval" in value && "samples" in value;
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

function uniqueNames(names: string[]): string[] {
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
