import type { CaseInput, FailureCase, Trace } from "../core/index.ts";

/** What an evaluator may look at for one trial: the model's output and the case it answered. */
export interface CheckContext {
  /** What the model answered (text for generation; any JSON value for structured outputs). */
  readonly output: unknown;
  /** The case's `expected`. */
  readonly expected: unknown;
  readonly input: CaseInput;
  /** The whole case (tags, split, cluster, meta). */
  readonly row: FailureCase;
  /** The white-box trace, when the run captured one. */
  readonly trace?: Trace;
  readonly signal?: AbortSignal;
}

/** One evaluator's verdict on one trial. `data` holds what a run-level aggregate needs (e.g. CHAIR counts). */
export interface CheckResult {
  readonly passed: boolean;
  readonly score?: number;
  readonly reason?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * A named, versioned check. `kind: "judge"` marks evaluators that call a model
 * (not deterministic: `rescore` refuses them).
 */
export interface Evaluator {
  readonly name: string;
  /** Declared, or 12 hex of sha256 over the canonical JSON of its name, parameters and definition. */
  readonly version: string;
  readonly kind: "deterministic" | "judge";
  readonly parameters: Readonly<Record<string, unknown>>;
  check(context: CheckContext): CheckResult | Promise<CheckResult>;
  /** Run-level numbers over every trial's result (e.g. CHAIR_s, CHAIR_i); `undefined` entries are skipped. */
  aggregate?(results: readonly CheckResult[]): Record<string, number>;
}

/** A check as recorded on a trial: the verdict, or the error that kept it from one. */
export interface CheckOutcome {
  readonly name: string;
  readonly version: string;
  readonly passed: boolean;
  readonly errored: boolean;
  readonly score?: number;
  readonly reason?: string;
  readonly error?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** The metric every eval has: a trial passes when every check passed. */
export const PASS_METRIC = "pass";
