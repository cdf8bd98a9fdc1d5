/**
 * Analyzers turn what the runtime gives (a teacher-forced forward's
 * reductions, extra generations) into per-case signals and run-level
 * findings. Each declares the capabilities it `requires`, the reductions it
 * reads, its parameters and the tags the protocol's hints map onto.
 */
import type { Capability, FailureCase, ModelInput, Reduction, Result, Trace } from "../core/index.ts";

/** One probed case: the case, the model's answer, whether it passed, and the forward's trace. */
export interface ProbeItem {
  readonly case: FailureCase;
  readonly output: string;
  readonly passed: boolean;
  readonly trace?: Trace;
  /** What analyzers' `probe` steps stored for this case (e.g. the answer under a rewrite). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** What an analyzer's `probe` step may ask of the model (extra generations beyond the labelled answer). */
export interface ProbeContext {
  generate(input: ModelInput): Promise<string>;
  /** The case's model input (prompt and decoded image). */
  readonly input: ModelInput;
}

export interface AnalyzerFindings {
  /** Per-case signal names this analyzer produced. */
  readonly signals: readonly string[];
  readonly [key: string]: unknown;
}

export interface AnalyzerArtifacts {
  /** Per-case values by signal name, in the order of the items given (NaN = not applicable). */
  readonly perCase: Readonly<Record<string, readonly number[]>>;
  readonly [key: string]: unknown;
}

export interface Analyzer {
  readonly name: string;
  readonly description: string;
  /** Topics the protocol's hints are matched against (attention, image, uncertainty, prompt, …). */
  readonly tags: readonly string[];
  readonly requires: readonly Capability[];
  /** Reductions the M1 forward must capture for this analyzer. */
  readonly reductions: readonly Reduction[];
  readonly parameters: Readonly<Record<string, unknown>>;
  /** Extra model calls for one case, stored with the case (so a resumed run does not repeat them). */
  probe?(item: ProbeItem, context: ProbeContext): Promise<Record<string, unknown>>;
  /** This analyzer's signals for one case; absent keys are not applicable to the case. */
  signals?(item: ProbeItem): Record<string, number>;
  /** Run-level findings over every item (per-case signals included as artifacts). */
  run(items: readonly ProbeItem[]): Result<AnalyzerFindings, AnalyzerArtifacts>;
}

/**
 * Collects an analyzer's per-case `signals` over all items into columns.
 * Example: `collect(items, (it) => ({ x: 1 }))` → `{ x: [1, 1, …] }`.
 */
export function collect(
  items: readonly ProbeItem[],
  signals: (item: ProbeItem) => Record<string, number>,
): Record<string, number[]> {
  const rows = items.map(signals);
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const out: Record<string, number[]> = {};
  for (const name of names) out[name] = rows.map((r) => (name in r ? r[name]! : NaN));
  return out;
}

/** Mean of the finite values (NaN when none). */
export function mean(values: ArrayLike<number>): number {
  let s = 0,
    k = 0;
  for (let i = 0; i < values.length; i++)
    if (Number.isFinite(values[i]!)) {
      s += values[i]!;
      k++;
    }
  return k ? s / k : NaN;
}

/** Mean of a per-case signal over failing and over passing items. */
export function meanByLabel(items: readonly ProbeItem[], values: readonly number[]): { fail: number; pass: number } {
  return {
    fail: mean(values.filter((_, i) => !items[i]!.passed)),
    pass: mean(values.filter((_, i) => items[i]!.passed)),
  };
}
