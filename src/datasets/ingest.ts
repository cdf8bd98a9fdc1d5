import type { DatasetRecord } from "../core/index.ts";
import { caseHash, caseVersionHash, versionFromHashes } from "./identity.ts";
import { importStream } from "./import.ts";
import type {
  ImportFormat,
  ImportOptions,
  ImportSource,
  ImportWarning,
  ImportedCase,
  LabelSource,
  Problem,
} from "./types.ts";

/** A case as a store keeps it: the imported case, its dataset, and its `caseHash`. */
export type CaseRow = ImportedCase & { readonly datasetId: string; readonly hash: string };

/** A dataset's record as a store keeps it. */
export type DatasetInfo = DatasetRecord;

/**
 * Where an import writes: the parts of the store it needs (any `Store` from
 * `src/store` fits), declared here so datasets depend on no store.
 */
export interface DatasetSink {
  getDataset(id: string): Promise<DatasetInfo | undefined>;
  putDataset(dataset: DatasetInfo): Promise<void>;
  addCases(datasetId: string, cases: readonly CaseRow[]): Promise<number>;
  /** The dataset's cases as stored, each with the `hash` (caseHash) it was stored with. */
  cases(datasetId: string): Promise<readonly CaseRow[]>;
  putImage(bytes: Uint8Array, type?: string): Promise<string>;
}

export interface IngestOptions extends Omit<ImportOptions, "images"> {
  /** The dataset's id in the store (new, or existing: then only new case ids are added). */
  readonly datasetId: string;
  /** Where image paths resolve (a file beside the dataset); images are stored once by content hash. */
  readonly readImage?: (ref: string) => Promise<Uint8Array | undefined>;
  /** Called after each batch is written, with the rows seen so far. */
  readonly onProgress?: (rows: number) => void;
  /** Cases per write (default 2000): fewer, larger transactions are faster; smaller ones hold less. */
  readonly batchSize?: number;
}

export interface IngestResult {
  readonly dataset: DatasetInfo;
  readonly format: ImportFormat;
  /** Ids added by this import. */
  readonly added: number;
  /** Valid rows whose id the dataset already had (left as they were). */
  readonly skipped: number;
  readonly problems: Problem[];
  readonly rows: number;
  /** What the file lacks or how it was read (see `ImportResult.warnings`). */
  readonly warnings: ImportWarning[];
  /** Which column the labels came from (see `ImportResult.label`). */
  readonly label?: LabelSource;
}

/**
 * Imports a file into a store batch by batch, so a large file is never held
 * whole: each batch's cases are written before the next is read, images go in
 * once by content hash, and the dataset record (count, version) is written
 * last. Only ids and version hashes are kept across batches.
 *
 * @example const { dataset, problems } = await ingest(store, file.stream(), { datasetId: "pope", name: file.name })
 */
export async function ingest(sink: DatasetSink, source: ImportSource, options: IngestOptions): Promise<IngestResult> {
  const { datasetId, readImage, onProgress, batchSize = 2000, ...importOptions } = options;
  const existing = await sink.getDataset(datasetId);
  const versions = new Map<string, string>();
  // A stored case keeps its caseHash, so re-importing into a large dataset does not hash every input again.
  if (existing) for (const c of await sink.cases(datasetId)) versions.set(c.id, caseVersionHash(c, c.hash));
  let format: ImportFormat = "jsonl";
  const problems: Problem[] = [];
  const warnings: ImportWarning[] = [];
  let label: LabelSource | undefined;
  let added = 0;
  let skipped = 0;
  let rows = 0;
  const images = readImage
    ? {
        read: readImage,
        async put(_hash: string, bytes: Uint8Array, type: string) {
          await sink.putImage(bytes, type);
        },
      }
    : undefined;
  const stream = importStream(source, { ...importOptions, ...(images && { images }) }, (f) => (format = f));
  let pending: ImportedCase[] = [];
  const flush = async () => {
    const fresh = pending.filter((c) => !versions.has(c.id));
    skipped += pending.length - fresh.length;
    pending = [];
    if (!fresh.length) return;
    const stored = fresh.map((c) => storedCase(c, datasetId));
    added += await sink.addCases(datasetId, stored);
    for (const c of stored) versions.set(c.id, caseVersionHash(c, c.hash));
  };
  for await (const batch of stream) {
    rows += batch.cases.length + batch.problems.length;
    problems.push(...batch.problems);
    if (batch.warnings) warnings.push(...batch.warnings);
    if (batch.label) label = batch.label;
    for (const c of batch.cases) pending.push(c);
    if (pending.length >= batchSize) {
      await flush();
      onProgress?.(rows);
    }
  }
  await flush();
  onProgress?.(rows);
  problems.sort((a, b) => a.line - b.line);
  const now = new Date().toISOString();
  const dataset: DatasetInfo = {
    id: datasetId,
    name: existing?.name ?? datasetId,
    version: versionFromHashes(versions),
    ...((existing?.source ?? options.name) !== undefined && { source: existing?.source ?? options.name }),
    format: existing?.format ?? format,
    caseCount: versions.size,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  await sink.putDataset(dataset);
  return { dataset, format, added, skipped, problems, rows, warnings, ...(label && { label }) };
}

/**
 * The case as a store keeps it: its fields, then its dataset and `caseHash`.
 * Added to the imported case itself, which nothing else holds (each row read
 * makes a new one), rather than copied: one object less to make and collect
 * per imported row.
 */
function storedCase(c: ImportedCase, datasetId: string): CaseRow {
  const row = c as unknown as Record<string, unknown>;
  row.datasetId = datasetId;
  row.hash = caseHash(c);
  return row as unknown as CaseRow;
}
