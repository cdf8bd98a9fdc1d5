import type { FailureCase } from "../core/index.ts";

/** The file formats `importDataset` reads. */
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
  /** 1-based line of the file (JSONL, CSV: the line where the record starts), or 1-based row/sample number. */
  readonly line: number;
  readonly reason: string;
  /** The row's id when it had one. */
  readonly id?: string;
}

/** What an import gives back: every valid case, and every row that was not, with its reason. */
export interface ImportResult {
  readonly format: ImportFormat;
  readonly cases: ImportedCase[];
  readonly problems: Problem[];
  /** Rows seen (valid + problems); blank lines are not rows. */
  readonly rows: number;
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
  /** Detected from the file name and first bytes when absent. */
  readonly format?: ImportFormat;
  /** File name, for format detection and messages. */
  readonly name?: string;
  readonly mapping?: ColumnMapping;
  /** CSV field delimiter (auto-detected when absent). */
  readonly delimiter?: string;
  /** Resolves and stores images; without it image references are kept as written, unchecked. */
  readonly images?: ImageSource;
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
