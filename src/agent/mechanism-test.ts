/**
 * M5's mechanism test, shared by the fixed loop (`investigate`) and the
 * judge-decided one (`run_surgery` in `investigateAgentic`): write the
 * attention a SUPPORTED hypothesis names, in the direction that should lower
 * the failures, and compare the intervened model with the untouched baseline
 * on the M5 cases at the mechanism test's share γ of α.
 */
import type { EventLog } from "./events.ts";
import type { Hypothesis } from "./diagnose.ts";
import {
  M5_E_METHOD,
  attentionBiasCandidate,
  evaluateCandidate,
  isYesNoTask,
  yesRatio,
  type RepairContext,
} from "./repair.ts";
import type { FailureCase } from "../core/index.ts";

/** The M5 cases with the unmodified model's outcome and answer on each. */
export interface MechanismCases {
  readonly cases: readonly FailureCase[];
  readonly baseline: ReadonlyMap<string, boolean>;
  readonly baselineOutputs: ReadonlyMap<string, string>;
}

export interface MechanismResult {
  /** p ≤ γ and it fixed more cases than it broke: causal evidence, not yet a validated fix. */
  readonly causal: boolean;
  readonly p: number;
  readonly n: number;
  readonly baselineFailures: number;
  readonly interventionFailures: number;
  readonly fixed: number;
  readonly broken: number;
  /** The intervention's signature, so the ladder does not try the same write again. */
  readonly signature: string;
  /** The sign of the image-token bias it wrote (none when it lowered the sink instead): L3b's direction. */
  readonly imageBiasSign?: 1 | -1;
}

/**
 * Is the mechanism a hypothesis names causal? Writes +2 on the image tokens' pre-softmax attention when
 * failures attend less to the image (direction −1), −2 when more (or −2 on the sink when failures put more
 * mass on it), runs the M5 cases with that write, tests the paired difference against the baseline one-sided
 * at `gamma`, and logs `intervention.tested` (`eMethod` and `cases` say how γ was set and where the cases
 * came from).
 *
 * @example
 * const r = await testMechanism(ctx, { id: "H1", signal: "attention.imageShare.mean", direction: -1, mechanism: "…" }, m5, 0.025, log, { eMethod: "γ = α/2", cases: "the 40 sealed cases" })
 * r.causal // true when failures dropped at p ≤ 0.025 with more fixed than broken
 */
export async function testMechanism(
  ctx: RepairContext,
  hypothesis: Pick<Hypothesis, "id" | "signal" | "direction" | "mechanism">,
  m5: MechanismCases,
  gamma: number,
  log: EventLog,
  notes: { readonly eMethod: string; readonly cases: string },
): Promise<MechanismResult> {
  if (!(gamma > 0 && gamma < 1)) throw new RangeError(`testMechanism(): gamma must lie in (0, 1), got ${gamma}`);
  if (m5.cases.length === 0) throw new RangeError("testMechanism(): cases must hold at least one M5 case, got 0");
  const sink = hypothesis.signal.startsWith("sink");
  // Failures attend less to the image (direction −1) → raise image attention; more sink mass (+1) → lower the sink.
  const value = -2 * hypothesis.direction;
  const candidate = attentionBiasCandidate("mechanism", value, sink ? "sink" : "image");
  const outcome = await evaluateCandidate(ctx, candidate, m5.cases, m5.baseline, gamma);
  const causal = outcome.p <= gamma && outcome.fixed > outcome.broken;
  log.append("M5", "intervention.tested", {
    hypothesis: hypothesis.id,
    description: `${candidate.description}; if ${hypothesis.id} (${hypothesis.mechanism}) is real, failures should drop`,
    n: outcome.n,
    baselineFailures: outcome.baselineFailures,
    interventionFailures: outcome.candidateFailures,
    fixed: outcome.fixed,
    broken: outcome.broken,
    delta: outcome.delta,
    p: outcome.p,
    e: outcome.e,
    eMethod: `${M5_E_METHOD}; here the mechanism test's ${notes.eMethod}`,
    test: outcome.test,
    unit: outcome.unit,
    ...(outcome.clusters !== undefined ? { clusters: outcome.clusters } : {}),
    gamma,
    ...(isYesNoTask(m5.cases)
      ? {
          yesRatio: yesRatio(outcome.run.outputs),
          baselineYesRatio: yesRatio(m5.cases.map((c) => m5.baselineOutputs.get(c.id) ?? "")),
        }
      : {}),
    cases: notes.cases,
    causal,
    note: causal
      ? "the intervention moved the failure rate as the mechanism predicts (causal evidence, not yet a validated fix)"
      : "the intervention did not move the failure rate significantly: the association is not shown to be causal",
  });
  return {
    causal,
    p: outcome.p,
    n: outcome.n,
    baselineFailures: outcome.baselineFailures,
    interventionFailures: outcome.candidateFailures,
    fixed: outcome.fixed,
    broken: outcome.broken,
    signature: candidate.signature,
    ...(sink ? {} : { imageBiasSign: value > 0 ? (1 as const) : (-1 as const) }),
  };
}
