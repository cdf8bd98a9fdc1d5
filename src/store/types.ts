import type { DatasetRecord, FailureCase } from "../core/index.ts";

export type { DatasetRecord };

/**
 * The store's records and its one interface. Two implementations pass one
 * contract suite (`contract.ts`): IndexedDB in the page (`idb.browser.ts`) and
 * a directory of JSON/JSONL files under Node (`files.node.ts`).
 *
 * Every record is plain data (JSON plus typed arrays in traces), so a run can
 * be exported as one file and imported on another machine.
 */

/**
 * A case as the store keeps it: the dataset's case (see `ImportedCase` in
 * `src/datasets`: it may carry a pass/fail `label` from an eval log) and its
 * `caseHash`.
 */
export type StoredCase = FailureCase & {
  readonly datasetId: string;
  /** `caseHash(case)`: 12 hex characters over input + expected. */
  readonly hash: string;
  /** Pass/fail label imported from an eval log (lm-eval, Inspect, promptfoo, a labelled table). */
  readonly label?: boolean;
};

/** An image blob, stored once under `sha256:<64 hex>` of its bytes. */
export interface ImageRecord {
  readonly hash: string;
  readonly bytes: Uint8Array;
  /** MIME type sniffed from the bytes (`image/png`, `image/jpeg`, …). */
  readonly type: string;
}

export type RunStatus = "running" | "finished" | "failed" | "cancelled";

/** One run: an eval (dataset × model × evaluators) or an investigation (the diagnosis loop). */
export interface RunRecord {
  readonly id: string;
  readonly kind: "eval" | "investigation" | (string & {});
  /** Dataset id. */
  readonly dataset: string;
  /** Model key or hub id. */
  readonly model: string;
  /** Says whether two runs are comparable: dataset version, evaluator versions, model identity. */
  readonly fingerprint: string;
  readonly status: RunStatus;
  /** ISO 8601. */
  readonly startedAt: string;
  readonly finishedAt?: string;
  /** Whatever the run was started with (evaluators, repeats, selection, seed …). */
  readonly config: Readonly<Record<string, unknown>>;
  /** Headline results once finished (metrics, counts). */
  readonly summary?: Readonly<Record<string, unknown>>;
}

/** One evaluator's verdict on one item. */
export interface ItemCheck {
  readonly name: string;
  readonly passed: boolean;
  readonly score?: number;
  readonly detail?: unknown;
  readonly [key: string]: unknown;
}

/** One judged item: one case × one repeat of a run. */
export interface ItemRecord {
  readonly runId: string;
  readonly caseId: string;
  /** 0-based repeat number. */
  readonly repeat: number;
  /** Position in the run's planned order (0-based, unique within a run): the resume key. */
  readonly index: number;
  readonly output: string;
  readonly passed: boolean;
  readonly checks: readonly ItemCheck[];
  readonly error?: string;
  readonly latencyMs: number;
  /** Per-item numbers analyzers computed (candidate signals for exploration). */
  readonly signals?: Readonly<Record<string, number>>;
}

/**
 * A run's progress marker, written in the same transaction as the items it
 * counts: after a crash it never claims an item that is not stored, nor misses one that is.
 */
export interface RunProgress {
  readonly runId: string;
  /** How many items are judged (= stored). */
  readonly done: number;
  /** How many items the run plans in all. */
  readonly total: number;
  /** ISO 8601. */
  readonly updatedAt: string;
}

/** One entry of a run's append-only event log; reports are built from this log alone. */
export interface EventRecord {
  readonly runId: string;
  /** 0-based, consecutive within a run. */
  readonly seq: number;
  /** ISO 8601. */
  readonly ts: string;
  /** Loop stage (`M1`…`M5`) or eval phase (`plan`, `judge`, `summary`). */
  readonly stage: string;
  /** Schema version of `payload` for this `type`. */
  readonly schema: number;
  readonly type: string;
  readonly payload: unknown;
}

/** An event to append: the store assigns `seq` (and `ts` when absent). */
export type EventInput = Omit<EventRecord, "runId" | "seq" | "ts"> & { readonly ts?: string };

/** A numeric array a trace may hold. */
export type TraceArray = Float32Array | Float64Array | Int32Array | Uint8Array;

/**
 * One of the runtime's reductions for one item (e.g. `imageAttentionShare`
 * as layers × heads). Stores split large arrays into chunks and join them on read.
 */
export interface TraceRecord {
  readonly runId: string;
  readonly caseId: string;
  readonly repeat: number;
  /** Reduction name (see `Reduction` in core) or any analyzer's own name. */
  readonly name: string;
  readonly data: TraceArray;
  readonly shape: readonly number[];
  readonly axes: readonly string[];
}

/** One named score of a run (a metric, a test statistic), with its interval when there is one. */
export interface ScoreRecord {
  readonly runId: string;
  readonly name: string;
  readonly value: number;
  readonly interval?: readonly [low: number, high: number];
  readonly n?: number;
  readonly detail?: unknown;
}

/** Which runs `listRuns` returns; every given field must match. */
export interface RunFilter {
  readonly kind?: string;
  readonly dataset?: string;
  readonly status?: RunStatus;
}

/** A run as one portable file (JSON). Typed arrays travel as `{ type, base64 }`; images as base64 when included. */
export interface RunExport {
  readonly format: "evalrx-run";
  readonly version: 1;
  readonly exportedAt: string;
  readonly run: RunRecord;
  readonly progress?: RunProgress;
  readonly items: readonly ItemRecord[];
  readonly events: readonly EventRecord[];
  readonly scores: readonly ScoreRecord[];
  readonly traces: readonly EncodedTrace[];
  readonly dataset?: DatasetRecord;
  readonly cases?: readonly StoredCase[];
  readonly images?: readonly { readonly hash: string; readonly type: string; readonly base64: string }[];
}

/** A trace inside a `RunExport`: its array as base64 of the little-endian bytes. */
export interface EncodedTrace extends Omit<TraceRecord, "data"> {
  readonly data: { readonly type: TraceArray[typeof Symbol.toStringTag]; readonly base64: string };
}

export interface ExportOptions {
  /** Include the dataset's record and cases (default true). */
  readonly dataset?: boolean;
  /** Include the image blobs the cases refer to (default false: they can be large). */
  readonly images?: boolean;
}

/** How much the store holds, and how much it may hold (the page's quota; the disk under Node). */
export interface StorageUsage {
  readonly usage?: number;
  readonly quota?: number;
  /** True when the browser granted persistent storage (always true for files). */
  readonly persisted: boolean;
}

/** How `lockRun` asks for a run's lock. */
export interface LockOptions {
  /** Wait until the holder lets go (default false: a held lock is refused at once with a `RunLockedError`). */
  readonly wait?: boolean;
  /** Stops a wait (rejects with the signal's reason). */
  readonly signal?: AbortSignal;
}

/**
 * The one-writer lock on a run, held from `lockRun` until `release`. While it
 * is held no other process, tab or worker can take it; different runs lock
 * independently.
 */
export interface RunLock {
  readonly runId: string;
  /** Who holds it, as `runLockHolder` says it (e.g. `process 4242 on host ci-3`). */
  readonly holder: string;
  /**
   * Aborted when the lock is lost while held (the file store: another process
   * judged this one dead and took the run over); the writer must stop.
   */
  readonly lost: AbortSignal;
  /** Lets go of the lock (once; later calls do nothing). */
  release(): Promise<void>;
}

/**
 * The one store interface. Every method is async; every write is atomic per
 * call (a transaction in IndexedDB; temp file + rename on disk). A write that
 * fails (quota, disk full) rejects with a `StoreError` that says what was kept.
 */
export interface Store {
  // Datasets and cases.
  /**
   * Creates or replaces a dataset's record; with `cases`, also replaces its
   * cases with exactly these (without, the cases stay as they are).
   */
  putDataset(dataset: DatasetRecord, cases?: readonly StoredCase[]): Promise<void>;
  /**
   * Adds cases in batches (a streamed import) and returns how many were new:
   * an id already there is skipped, never overwritten. The caller then
   * updates the record (`caseCount`, `version`) with `putDataset(record)`.
   */
  addCases(datasetId: string, cases: readonly StoredCase[]): Promise<number>;
  getDataset(id: string): Promise<DatasetRecord | undefined>;
  listDatasets(): Promise<DatasetRecord[]>;
  /** The dataset's cases, sorted by id. */
  cases(datasetId: string): Promise<StoredCase[]>;
  getCase(datasetId: string, caseId: string): Promise<StoredCase | undefined>;
  /** Removes a dataset and its cases (images stay: other datasets may share them). */
  deleteDataset(id: string): Promise<void>;

  // Images, once each, by content hash.
  /** Stores the bytes (once) and returns their `sha256:<hex>` key. */
  putImage(bytes: Uint8Array, type?: string): Promise<string>;
  getImage(hash: string): Promise<ImageRecord | undefined>;
  /** Several images in one read (one transaction where the store has them), in the order asked; undefined where none is stored. */
  getImages(hashes: readonly string[]): Promise<(ImageRecord | undefined)[]>;
  hasImage(hash: string): Promise<boolean>;

  // Runs.
  /** Records a new run; rejects when the id exists. */
  createRun(run: RunRecord): Promise<void>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** Runs matching every field given, newest `startedAt` first. */
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /** Changes a run's status, finish time, summary or config; rejects for an unknown run. */
  updateRun(
    id: string,
    changes: Partial<Pick<RunRecord, "status" | "finishedAt" | "summary" | "config">>,
  ): Promise<void>;
  /** Removes a run and everything it holds (items, progress, events, traces, scores). */
  deleteRun(id: string): Promise<void>;

  /**
   * Stores judged items and the run's progress marker in one atomic write:
   * after a crash both or neither are there. Rejects an item whose `index` is
   * already stored (an item is judged exactly once).
   */
  appendItems(runId: string, items: readonly ItemRecord[], progress: Omit<RunProgress, "runId">): Promise<void>;
  /** The run's items, sorted by `index`. */
  items(runId: string): Promise<ItemRecord[]>;
  progress(runId: string): Promise<RunProgress | undefined>;

  /** Appends events; returns the records as stored (with `seq` and `ts`). */
  appendEvents(runId: string, events: readonly EventInput[]): Promise<EventRecord[]>;
  /** Events sorted by `seq`, from `fromSeq` (default 0). */
  events(runId: string, fromSeq?: number): Promise<EventRecord[]>;

  /** Stores traces (replacing one with the same run, case, repeat and name). */
  putTraces(traces: readonly TraceRecord[]): Promise<void>;
  traces(runId: string, filter?: { readonly caseId?: string; readonly name?: string }): Promise<TraceRecord[]>;

  /** Stores scores (replacing one with the same run and name). */
  putScores(scores: readonly ScoreRecord[]): Promise<void>;
  scores(runId: string): Promise<ScoreRecord[]>;

  // One writer per run.
  /**
   * Takes the run's writer lock (the run need not exist yet). A lock held by
   * another live writer is refused with a `RunLockedError` naming the holder
   * (or waited for with `wait: true`). The file store's lock is a file with the
   * holder's pid, host and a heartbeat, taken over when its holder is dead; the
   * page's is a Web Lock (`navigator.locks`), released when its tab closes.
   */
  lockRun(runId: string, options?: LockOptions): Promise<RunLock>;
  /**
   * Who holds the run's lock now, or undefined when nobody live does: a run
   * whose status is `running` with no holder was interrupted and can be resumed.
   */
  runLockHolder(runId: string): Promise<string | undefined>;

  // Moving runs between machines.
  exportRun(runId: string, options?: ExportOptions): Promise<RunExport>;
  /** Imports an exported run (and its dataset/images when present); rejects when the run id exists. */
  importRun(data: RunExport): Promise<void>;

  usage(): Promise<StorageUsage>;
  close(): Promise<void>;
}
