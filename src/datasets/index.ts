/**
 * `evalrx/datasets`: cases in from the files people have (JSONL, CSV,
 * Parquet, lm-eval / Inspect / promptfoo logs), every bad row named with its
 * line and reason, stable selections, and content identity — the same in the
 * page, a worker and Node.
 */
export type {
  ColumnMapping,
  ImageSource,
  ImportFormat,
  ImportOptions,
  ImportResult,
  ImportSource,
  ImportedCase,
  ImportWarning,
  LabelSource,
  Problem,
  WarningCode,
} from "./types.ts";
export { IMPORT_FORMATS } from "./types.ts";
export { canonicalJson } from "./canonical.ts";
export { sha256Hex, unitHash } from "./hash.ts";
export { caseHash, caseVersionHash, datasetVersion, derivedId, versionFromHashes } from "./identity.ts";
export { select, stableSample, holdout, type Selection, type Holdout, type HoldoutOptions } from "./select.ts";
export {
  importDataset,
  importStream,
  parseJsonl,
  detectFormat,
  uniqueNames,
  UnreadableFileError,
  type ImportBatch,
} from "./import.ts";
export { importTable, resolveMapping, type ResolvedMapping, type TableOptions } from "./table.ts";
export { rowToCase, parseLabel, CASE_KEYS } from "./row.ts";
export { labelLog, type LogRows } from "./logs.ts";
export { inspectLog, inspectJsonLog, inspectSample } from "./inspect.ts";
export { readInspectArchive } from "./inspect-eval.ts";
export { lmEvalLog, lmEvalResultsError } from "./lm-eval.ts";
export { promptfooLog, promptfooExpected } from "./promptfoo.ts";
export { parseJson } from "./json.ts";
export { zipEntries, isZip, type ZipEntry } from "./zip.ts";
export { readLines, type Line } from "./lines.ts";
export { sniffImage, decodeDataUrl, imageKey } from "./images.ts";
export { Dataset, type AddResult } from "./dataset.ts";
export {
  ingest,
  type DatasetSink,
  type DatasetInfo,
  type CaseRow,
  type IngestOptions,
  type IngestResult,
} from "./ingest.ts";
