/**
 * Dataset imports off the main thread: a dropped file is read here (a `File`
 * crosses to a worker without being copied), checked row by row before the
 * user confirms anything, then written to IndexedDB with `ingest` (IndexedDB
 * is reachable from workers) and announced on the store's change feed.
 */
import {
  caseVersionHash,
  detectFormat,
  importStream,
  ingest,
  parseJson,
  versionFromHashes,
  type ColumnMapping,
  type DatasetSink,
  type ImportFormat,
  type ImportWarning,
  type LabelSource,
  type Problem,
  type ResolvedMapping,
} from "../src/datasets/index.ts";
import { droppedImages } from "../src/datasets/dropped.browser.ts";
import { importQuotaMessage, isQuotaFailure } from "./import-quota.ts";
import { announceChange } from "../src/store/changes.browser.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import { FacetCounter, rowView, type CaseRowView, type Facets } from "../src/ui/pages/datasets/case-filter.ts";
import { JSONL_MAPPING_ROWS, jsonlColumns, tableColumns, type TableColumns } from "../src/ui/pages/datasets/columns.ts";
import { freeDatasetId } from "../src/ui/pages/datasets/names.ts";

/** A file the user dropped or picked, with its path relative to what was dropped (`pope/images/a.png`). */
export interface DroppedInput {
  readonly file: File;
  readonly path: string;
}

/** How to read one dropped dataset: the files dropped together, which one is the dataset, and the user's choices. */
export interface ReadRequest {
  readonly files: readonly DroppedInput[];
  /** Index into `files` of the dataset (the rest may be its images). */
  readonly dataset: number;
  /** Detected from the name and first bytes when absent. */
  readonly format?: ImportFormat;
  readonly mapping?: ColumnMapping;
  readonly delimiter?: string;
}

/** What reading a file found, before anything is stored. */
export interface CheckReport {
  /** The dataset's path as dropped. */
  readonly path: string;
  readonly bytes: number;
  readonly format: ImportFormat;
  /** Rows seen (valid + problems). */
  readonly rows: number;
  readonly valid: number;
  /** Every bad row, by line, with the reason `evalrx data check` gives. */
  readonly problems: readonly Problem[];
  /** What the importer noticed about the file as a whole (no samples, a cancelled run, one class only …). */
  readonly warnings: readonly ImportWarning[];
  /** Where the pass/fail labels come from, when the cases have labels. */
  readonly label?: LabelSource;
  /** For tables (CSV, Parquet) and JSONL not in the dataset format: the columns, and which case field each becomes. */
  readonly columns?: readonly string[];
  readonly mapping?: ResolvedMapping;
  /** The mapping names a column the table does not have (nothing was read: fix the mapping). */
  readonly mappingError?: string;
  /** How the valid cases spread over splits, tags, labels and images. */
  readonly facets: Facets;
  /** The first valid cases, as the table will show them. */
  readonly preview: readonly CaseRowView[];
  /** Image files dropped beside the dataset. */
  readonly imagesBeside: number;
  readonly seconds: number;
}

/** What a finished (or cancelled) import did. */
export interface ImportReport {
  readonly datasetId: string;
  readonly added: number;
  /** Valid rows whose id the dataset already had: left as they were. */
  readonly skipped: number;
  readonly problems: number;
  readonly rows: number;
  readonly caseCount: number;
  readonly version: string;
  readonly seconds: number;
  /** Set when the user cancelled: what was kept. */
  readonly cancelled?: string;
}

/** Progress of a read or an import: rows so far, bytes of the file read. */
export interface ReadProgress {
  readonly rows: number;
  readonly bytes: number;
  readonly totalBytes: number;
}

/** One of the demo datasets the app ships under `public/demo/`. */
export interface DemoReport extends ImportReport {
  readonly file: string;
}

/** The demo datasets, bundled with the app (`public/demo/`), with their images under `demo/images/`. */
export const DEMO_FILES = [
  { id: "pope", file: "pope.jsonl" },
  { id: "captions", file: "captions.jsonl" },
  { id: "tiny-lm", file: "tiny-lm.jsonl" },
] as const;

const PREVIEW_ROWS = 5;
const PROGRESS_EVERY_MS = 100;

/** Thrown (by name, across the worker boundary) when the user cancelled. */
class CancelledError extends Error {
  override readonly name = "CancelledError";
}

/** A job the page can cancel by its id. */
interface Job {
  cancelled: boolean;
  bytes: number;
}
const jobs = new Map<number, Job>();

/** Cancels that arrived before their job started (the page numbers jobs upwards, so they are the ones ahead). */
const cancelledEarly = new Set<number>();
let latestJob = 0;

function job(id: number): Job {
  const j = { cancelled: cancelledEarly.delete(id), bytes: 0 };
  latestJob = Math.max(latestJob, id);
  jobs.set(id, j);
  return j;
}

/** Stops the read or import `jobId` at its next chunk (or at its start, if the cancel comes first). */
export function cancel(jobId: number): void {
  const j = jobs.get(jobId);
  if (j) j.cancelled = true;
  else if (jobId > latestJob) cancelledEarly.add(jobId);
}

const stores = new Map<string, Promise<IdbStore>>();

/** This worker's connection to the page's database (one per name, opened once). */
export function openStore(db: string): Promise<IdbStore> {
  let store = stores.get(db);
  if (!store) {
    store = IdbStore.open(db);
    stores.set(db, store);
    store.catch(() => stores.delete(db));
  }
  return store;
}

/** Bytes of a dropped file read at a time (see `sliced`). */
const SLICE = 4 << 20;

/**
 * The file's bytes in slices of 4 MiB, the next one read while the last is parsed, counted, stopping when
 * the job is cancelled. `File.stream()` hands over 64 KiB at a time: a 57 MB file was ~900 reads, and
 * their promises and copies were 7% of a traced import's worker time.
 */
async function* sliced(file: Blob, j: Job): AsyncGenerator<Uint8Array> {
  let next = file.size > 0 ? file.slice(0, SLICE).arrayBuffer() : undefined;
  for (let at = 0; next;) {
    if (j.cancelled) throw new CancelledError("the import was cancelled");
    const bytes = new Uint8Array(await next);
    at += bytes.byteLength;
    // A file cut short since it was picked ends the read (its last line is then reported as it is).
    next = bytes.byteLength > 0 && at < file.size ? file.slice(at, at + SLICE).arrayBuffer() : undefined;
    j.bytes += bytes.byteLength;
    yield bytes;
  }
}

/** A stream's bytes, counted, stopping when the job is cancelled. */
async function* counted(source: ReadableStream<Uint8Array>, j: Job): AsyncGenerator<Uint8Array> {
  const reader = source.getReader();
  try {
    for (;;) {
      if (j.cancelled) throw new CancelledError("the import was cancelled");
      const { done, value } = await reader.read();
      if (done) return;
      j.bytes += value.byteLength;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function throttled<T>(report: ((value: T) => void) | undefined): (value: T, force?: boolean) => void {
  let last = 0;
  return (value, force = false) => {
    const now = performance.now();
    if (!report || (!force && now - last < PROGRESS_EVERY_MS)) return;
    last = now;
    report(value);
  };
}

/**
 * The dropped files as `droppedImages` reads them: it finds an image by the
 * file's `webkitRelativePath` (`pope/images/a.png`), which a folder picker
 * sets but a dropped folder's files (read through `webkitGetAsEntry`) leave
 * empty; the page sends each file's path beside it, and it is given to the
 * file here, so images resolve by path (not only by name) however they came.
 */
function withPaths(files: readonly DroppedInput[]): File[] {
  return files.map(({ file, path }) => {
    if (file.webkitRelativePath === path || !path.includes("/")) return file;
    return Object.defineProperty(file, "webkitRelativePath", { value: path, configurable: true });
  });
}

/** The first rows of a JSONL file, parsed (bad lines skipped), to find its columns as the importer does. */
async function firstJsonlRows(file: Blob): Promise<unknown[]> {
  const text = new TextDecoder().decode(await file.slice(0, 1 << 20).arrayBuffer());
  const rows: unknown[] = [];
  for (const line of text.split("\n").slice(0, -1)) {
    if (rows.length >= JSONL_MAPPING_ROWS) break;
    if (line.trim() === "") continue;
    try {
      rows.push(parseJson(line.replace(/^\uFEFF/, "")));
    } catch {
      // The import names the line; it does not count towards the columns.
    }
  }
  return rows;
}

const IMAGE_FILE = /\.(png|jpe?g|gif|webp|bmp)$/i;

/**
 * Reads the dropped dataset as an import would, storing nothing: every bad
 * row with its line and reason, the warnings, the columns and their mapping
 * (tables), and how the valid cases spread. Images are looked up among the
 * files dropped with it and checked, not kept.
 */
export async function check(
  request: ReadRequest,
  jobId: number,
  onProgress?: (p: ReadProgress) => void,
): Promise<CheckReport> {
  const started = performance.now();
  const j = job(jobId);
  try {
    const files = withPaths(request.files);
    const dataset = files[request.dataset];
    const input = request.files[request.dataset];
    if (!dataset || !input) throw new Error(`no dataset file at ${request.dataset} among ${files.length} file(s)`);
    const images = droppedImages(files, dataset);
    const progress = throttled(onProgress);
    const problems: Problem[] = [];
    const warnings: ImportWarning[] = [];
    let label: LabelSource | undefined;
    const facets = new FacetCounter();
    const preview: CaseRowView[] = [];
    let valid = 0;
    const head = new Uint8Array(await dataset.slice(0, 4096).arrayBuffer());
    const detected = request.format ?? detectFormat(input.path, head);
    let format: ImportFormat = detected === "json" ? "inspect" : detected;
    const options = {
      name: input.path,
      ...(request.format && { format: request.format }),
      ...(request.mapping && { mapping: request.mapping }),
      ...(request.delimiter && { delimiter: request.delimiter }),
      images: { read: images.read },
    };
    let source: AsyncIterable<Uint8Array> | Uint8Array = sliced(dataset, j);
    let table: TableColumns | undefined;
    if (detected === "csv" || detected === "parquet") {
      // Tables are read whole anyway: read once, and find their columns in the same bytes.
      const bytes = new Uint8Array(await dataset.arrayBuffer());
      j.bytes = bytes.byteLength;
      source = bytes;
      table = await tableColumns(detected, bytes, options);
    } else if (detected === "jsonl") table = jsonlColumns(await firstJsonlRows(dataset), request.mapping);
    const base = {
      path: input.path,
      bytes: dataset.size,
      imagesBeside: request.files.filter((f, i) => i !== request.dataset && IMAGE_FILE.test(f.path)).length,
      ...(table && { columns: table.columns, mapping: "mapping" in table ? table.mapping : {} }),
    };
    if (table && "mappingError" in table)
      return {
        ...base,
        format,
        rows: 0,
        valid: 0,
        problems: [],
        warnings: [],
        mappingError: table.mappingError,
        facets: facets.result(),
        preview: [],
        seconds: (performance.now() - started) / 1000,
      };
    for await (const batch of importStream(source, options, (f) => (format = f))) {
      for (const c of batch.cases) {
        valid++;
        facets.add(c);
        if (preview.length < PREVIEW_ROWS) preview.push(rowView(c, valid - 1));
      }
      for (const p of batch.problems) problems.push(p);
      if (batch.warnings) warnings.push(...batch.warnings);
      label ??= batch.label;
      if (j.cancelled) throw new CancelledError("reading the file was cancelled");
      progress({ rows: valid + problems.length, bytes: j.bytes, totalBytes: dataset.size });
    }
    problems.sort((a, b) => a.line - b.line);
    return {
      ...base,
      format,
      rows: valid + problems.length,
      valid,
      problems,
      warnings,
      ...(label && { label }),
      facets: facets.result(),
      preview,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    jobs.delete(jobId);
  }
}

/**
 * A store seen by `ingest` with its writes pipelined: a batch's IndexedDB
 * transaction commits while the next batch is parsed (at most `depth` in
 * flight). `ingest` hands `addCases` only ids the dataset does not have yet,
 * so each write's count is known up front; the real counts are summed in
 * `added`, and a failed write fails the next call (the record is written last,
 * only after every batch is stored).
 */
function pipelined(
  store: IdbStore,
  depth = 2,
): DatasetSink & { readonly added: () => number; readonly drain: () => Promise<void> } {
  const inFlight: Promise<unknown>[] = [];
  let failure: unknown;
  let added = 0;
  const settle = async () => {
    await Promise.all(inFlight.splice(0));
    if (failure !== undefined) throw failure;
  };
  return {
    getDataset: (id) => store.getDataset(id),
    cases: (id) => store.cases(id),
    putImage: (bytes, type) => store.putImage(bytes, type),
    async addCases(id, cases) {
      if (failure !== undefined) throw failure;
      while (inFlight.length >= depth) await inFlight.shift();
      if (failure !== undefined) throw failure;
      inFlight.push(
        store.addCases(id, cases).then(
          (n) => void (added += n),
          (error: unknown) => void (failure ??= error),
        ),
      );
      return cases.length;
    },
    async putDataset(dataset) {
      await settle();
      await store.putDataset(dataset);
    },
    added: () => added,
    drain: async () => void (await Promise.all(inFlight.splice(0))),
  };
}

/** What to do when the dataset id is taken: refuse (a new dataset), or add only the ids it does not have. */
export type ImportMode = "new" | "add";

export interface ImportRequest extends ReadRequest {
  /** IndexedDB database the page uses. */
  readonly db: string;
  readonly datasetId: string;
  readonly mode: ImportMode;
}

/**
 * Imports the dropped dataset into the store: valid rows become cases (new
 * ids only, in batches), images are stored once by content hash, and the
 * dataset's record (count, version) is written last. `mode: "new"` refuses an
 * id that exists, so a dataset is never replaced. Cancelled, a new dataset is
 * removed again (nothing kept); cases added to an existing one stay, and its
 * record is brought up to date.
 */
export async function importFiles(
  request: ImportRequest,
  jobId: number,
  onProgress?: (p: ReadProgress) => void,
): Promise<ImportReport> {
  const started = performance.now();
  const j = job(jobId);
  const store = await openStore(request.db);
  const { datasetId } = request;
  try {
    const input = request.files[request.dataset];
    if (!input) throw new Error(`no dataset file at ${request.dataset}`);
    const existing = await store.getDataset(datasetId);
    if (request.mode === "new" && existing)
      throw new Error(
        `a dataset named '${datasetId}' exists already (${existing.caseCount} cases); choose another name, or add the new cases to it`,
      );
    const files = withPaths(request.files);
    const images = droppedImages(files, files[request.dataset]);
    const sink = pipelined(store);
    const progress = throttled(onProgress);
    const file = files[request.dataset]!;
    let rowsRead = 0;
    let result;
    try {
      result = await ingest(sink, sliced(file, j), {
        datasetId,
        name: input.path,
        ...(request.format && { format: request.format }),
        ...(request.mapping && { mapping: request.mapping }),
        ...(request.delimiter && { delimiter: request.delimiter }),
        readImage: images.read,
        // Fewer, larger transactions: each is five pages of cases, written while the next batch is read.
        batchSize: 5000,
        onProgress: (rows) => {
          rowsRead = rows;
          progress({ rows, bytes: j.bytes, totalBytes: file.size });
        },
      });
    } catch (error) {
      if (isQuotaFailure(error)) {
        // Undo (new) or record (add) what was stored, as a cancel does, and say how much space the rest needs.
        await sink.drain();
        // (With the storage full, bringing the record up to date may fail too: the next import does it.)
        await afterCancel(store, request, existing !== undefined).catch(() => undefined);
        announceChange(request.db, { kind: "datasets", id: datasetId });
        const stored = existing ? sink.added() : 0;
        throw new Error(
          importQuotaMessage({
            datasetId,
            kept: existing ? "added" : "nothing",
            rowsRead: Math.max(rowsRead, stored),
            rowsStored: stored,
            fileBytes: file.size,
            bytesRead: j.bytes,
          }),
          { cause: error },
        );
      }
      if (!(error instanceof CancelledError)) throw error;
      // Let the writes already queued land, then undo (new) or record (add) what they stored.
      await sink.drain();
      const cancelled = await afterCancel(store, request, existing !== undefined);
      announceChange(request.db, { kind: "datasets", id: datasetId });
      return { ...cancelled, seconds: (performance.now() - started) / 1000 };
    }
    announceChange(request.db, { kind: "datasets", id: datasetId });
    return {
      datasetId,
      added: sink.added(),
      skipped: result.skipped + (result.added - sink.added()),
      problems: result.problems.length,
      rows: result.rows,
      caseCount: result.dataset.caseCount,
      version: result.dataset.version,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    jobs.delete(jobId);
  }
}

async function afterCancel(
  store: IdbStore,
  request: ImportRequest,
  existed: boolean,
): Promise<Omit<ImportReport, "seconds">> {
  const { datasetId } = request;
  const before = await store.getDataset(datasetId);
  if (!existed) {
    await store.deleteDataset(datasetId);
    return {
      datasetId,
      added: 0,
      skipped: 0,
      problems: 0,
      rows: 0,
      caseCount: 0,
      version: "",
      cancelled: "Cancelled before the end: nothing was kept (a new dataset is stored whole or not at all).",
    };
  }
  const cases = await store.cases(datasetId);
  const version = versionFromHashes(cases.map((c) => [c.id, caseVersionHash(c, c.hash)] as const));
  const added = cases.length - (before?.caseCount ?? 0);
  await store.putDataset({
    ...before!,
    version,
    caseCount: cases.length,
    updatedAt: new Date().toISOString(),
  });
  return {
    datasetId,
    added,
    skipped: 0,
    problems: 0,
    rows: 0,
    caseCount: cases.length,
    version,
    cancelled: `Cancelled before the end: the ${added} new case(s) added by then are kept, and '${datasetId}' now has ${cases.length} cases (version ${version}).`,
  };
}

/**
 * Adds the demo datasets the app ships (`demo/pope.jsonl` with its images,
 * `demo/captions.jsonl`, `demo/tiny-lm.jsonl`), fetched from the app's own
 * origin. A demo already imported is left as it is (only new ids are added);
 * a dataset of the user's own with a demo's name is never touched: the demo
 * gets a free name beside it.
 */
export async function addDemo(
  db: string,
  baseUrl: string,
  jobId: number,
  onProgress?: (p: { readonly file: string; readonly rows: number }) => void,
): Promise<DemoReport[]> {
  const j = job(jobId);
  const store = await openStore(db);
  const reports: DemoReport[] = [];
  try {
    for (const demo of DEMO_FILES) {
      if (j.cancelled) throw new CancelledError("adding the demo datasets was cancelled");
      const started = performance.now();
      const source = `demo/${demo.file}`;
      const url = new URL(demo.file, baseUrl);
      const response = await fetch(url);
      if (!response.ok || !response.body)
        throw new Error(`${source}: the app answered HTTP ${response.status}; this build is missing its demo files`);
      const existing = await store.getDataset(demo.id);
      const ids = (await store.listDatasets()).map((d) => d.id);
      const datasetId = existing && existing.source !== source ? freeDatasetId(`${demo.id}-demo`, ids) : demo.id;
      const result = await ingest(store, counted(response.body, j), {
        datasetId,
        name: source,
        readImage: async (ref) => {
          const image = await fetch(new URL(ref, url));
          if (image.status === 404) return undefined;
          if (!image.ok) throw new Error(`HTTP ${image.status}`);
          return new Uint8Array(await image.arrayBuffer());
        },
        onProgress: (rows) => onProgress?.({ file: source, rows }),
      });
      announceChange(db, { kind: "datasets", id: datasetId });
      reports.push({
        file: source,
        datasetId,
        added: result.added,
        skipped: result.skipped,
        problems: result.problems.length,
        rows: result.rows,
        caseCount: result.dataset.caseCount,
        version: result.dataset.version,
        seconds: (performance.now() - started) / 1000,
      });
    }
    return reports;
  } finally {
    jobs.delete(jobId);
  }
}
