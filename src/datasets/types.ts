import type { FailureCase } from "../core/index.ts";

/**
 * The file formats `importDataset` reads. `inspect` is both of Inspect AI's
 * log formats: the `.eval` archive (a zip) and the `.json` log; `lm-eval` is
 * a samples file in any layout the harness has written (JSONL, or one JSON list).
 */
export const IMPORT_FORMATS = ["jsonl", "csv", "parquet", "lm-eval", "inspect", "promptfoo"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/**
 * A case as imported. Eval logs (lm-eval, Inspect, promptfoo) and labelled
 * tables carry a pass/fail verdict per case: it is `label` (true = pass).
 * Every column not mapped onto a case field is kept in `meta` as a candidate signal.
 */
export type ImportedCase = FailureCase & {
  /** Pass (true) or fail (false), when the source says; absent for plain datasets. */
  readonly label?: boolean;
};

/** One row that could not become a case, with where it was and why. */
export interface Problem {
  /** 1-based line of the file (JSONL, CSV: the line where the record starts), or 1-based row/sample number (Inspect `.eval`: the sample's place in the archive, and the reason names its entry). */
  readonly line: number;
  readonly reason: string;
  /** The row's id when it had one. */
  readonly id?: string;
}

/**
 * What a warning is about, for a page to group, count or translate by:
 * - `empty`: the file holds no rows at all;
 * - `no-samples`: a log with no samples (a header-only Inspect log, a promptfoo Eval object whose results are in its database);
 * - `run-cancelled`, `run-error`, `run-unfinished`: the run that wrote the log stopped early or is still going (with counts);
 * - `sample-errors`: samples that ended in an error and have no score;
 * - `summaries-only`: an Inspect archive without sample files, read from its sample summaries;
 * - `superseded`: sample records replaced by a later record of the same sample (retries);
 * - `no-image`: cases kept with no image because theirs was a placeholder or could not be found;
 * - `no-label`: a log in which no column reads as a pass/fail verdict;
 * - `unlabelled`: rows whose value in the label column is not a verdict (they have no label);
 * - `one-class`: every labelled case passes, or every one fails.
 */
export type WarningCode =
  | "empty"
  | "no-samples"
  | "run-cancelled"
  | "run-error"
  | "run-unfinished"
  | "sample-errors"
  | "summaries-only"
  | "superseded"
  | "no-image"
  | "no-label"
  | "unlabelled"
  | "one-class";

/**
 * Something the reader noticed about the file as a whole that cost no row (a
 * row that could not be read is a `Problem`): said once, with the number of
 * cases it concerns. The CLI prints each; the page shows them beside the problems.
 */
export interface ImportWarning {
  readonly code: WarningCode;
  /** One sentence for the user: what is so, and what to do about it when something can be done. */
  readonly message: string;
  /** How many cases (rows, samples) it concerns, when it is about cases. */
  readonly count?: number;
}

/**
 * Where the pass/fail verdict (`ImportedCase.label`) came from: one column
 * for the whole file, named so the user can check it, and the columns that
 * are the label in another form, which `explore` must never test as signals
 * (they would "predict" failure perfectly and explain nothing).
 */
export interface LabelSource {
  /** The column the verdict was read from, as `mapping.label` / `--label` names it (a `meta` key for logs, e.g. `score.match`, `bleu_acc`, `success`). */
  readonly column: string;
  /** Why this column: named by the user, or how it was chosen (e.g. "the first metric whose every value is 0 or 1"). */
  readonly reason: string;
  /** `meta` columns that are the label or derived from it (the scorer's value, answer and explanation; the metric's siblings; promptfoo's score and named scores). */
  readonly derived: readonly string[];
  /** Other columns that read as verdicts and could be named instead. */
  readonly choices: readonly string[];
}

/** What an import gives back: every valid case, and every row that was not, with its reason. */
export interface ImportResult {
  readonly format: ImportFormat;
  readonly cases: ImportedCase[];
  readonly problems: Problem[];
  /** Rows seen (valid + problems); blank lines are not rows. */
  readonly rows: number;
  /** What the file lacks or how it was read, once for the whole file (see `WarningCode`); empty when there is nothing to say. */
  readonly warnings: ImportWarning[];
  /** Which column the labels came from; absent when no case has a label. */
  readonly label?: LabelSource;
}

/**
 * Which source column is which case field (for tables: CSV, Parquet, any
 * tool's rows). Unset fields are detected by common names (`id`, `input` /
 * `prompt` / `question`, `label` / `passed` / `correct`, `cluster`, …).
 */
export interface ColumnMapping {
  readonly id?: string;
  readonly input?: string;
  /** Column holding an image reference (path, data URL). */
  readonly image?: string;
  readonly expected?: string;
  /** Column holding the pass/fail verdict (booleans, 1/0, pass/fail, C/I, yes/no, true/false). */
  readonly label?: string;
  readonly cluster?: string;
  readonly split?: string;
  readonly tags?: string;
  readonly status?: string;
}

/**
 * Where image references resolve: `read(ref)` gives the bytes of a path
 * relative to the dataset file (Node: a file next to it; page: a file dropped
 * with it), or undefined when there is none. `put` stores the bytes once by
 * content hash (the store's `putImage`); without it images are checked but not kept.
 */
export interface ImageSource {
  read(ref: string): Promise<Uint8Array | undefined>;
  put?(hash: string, bytes: Uint8Array, type: string): Promise<void>;
}

export interface ImportOptions {
  /** Detected from the first bytes (zip, Parquet, JSON, JSONL) and the file name when absent. */
  readonly format?: ImportFormat;
  /** File name, for format detection and messages. */
  readonly name?: string;
  /**
   * Which column is which case field. Tables (CSV, Parquet, JSONL rows) map
   * columns; eval logs map their `meta` columns (`label: "score.match"` or
   * just the scorer `"match"`, a metric such as `"rouge1_acc"`, `cluster: "metadata.image"`).
   * A label column that is not in the file is refused with the columns there are.
   */
  readonly mapping?: ColumnMapping;
  /** CSV field delimiter (auto-detected when absent). */
  readonly delimiter?: string;
  /** Resolves and stores images; without it image references are kept as written, unchecked. */
  readonly images?: ImageSource;
  /**
   * Read no image at all: cases keep no image reference (`explore` reads a
   * log for its labels and columns only, and a log's inline images would
   * otherwise be held in memory with every case).
   */
  readonly skipImages?: boolean;
  /**
   * Require an input on every row (default true). Eval logs read only for
   * their labels and columns (`explore`) may have no prompt: with false, such
   * a row gets `input: { prompt: "" }` instead of a "missing input" problem.
   */
  readonly requireInput?: boolean;
}

/** Bytes or text, whole or as a stream of chunks (a `File.stream()` or a Node read stream). */
export type ImportSource =
  string | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;
