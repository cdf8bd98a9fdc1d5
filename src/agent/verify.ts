/**
 * M4 verify: each frozen hypothesis decided once on the sealed split. The
 * statistical gate runs the same test one-sided in the stated direction (cluster-
 * aware when cases share clusters), turns each p into an e-value at the
 * hypothesis' share of α — shares fixed from the exploration split — runs e-BH
 * at α over the frozen family alone, and checks the effect's direction; the
 * protocol-consistency gate asks whether it answers the question asked.
 */
import { eBH } from "../stats/index.ts";
import { associate, type Association } from "./association.ts";
import type { Hypothesis } from "./diagnose.ts";
import { THRESHOLD_METHOD, familyWeights, thresholdE, zOfP, type Calibrator } from "./evalue.ts";
import type { EventLog } from "./events.ts";
import { consistency, type Judge } from "./judge.ts";
import type { ConsistencyVerdict, ExperimentProtocol } from "./protocol.ts";
import { codeValues, type CaseTable } from "./signals.ts";

export type Verdict = "SUPPORTED" | "REFUTED" | "INCONCLUSIVE";

export interface VerifiedHypothesis {
  readonly id: string;
  /** The sealed test; its `e` is the all-or-nothing e-value at `gamma`, its `eMethod` says so. */
  readonly association: Association;
  /** The hypothesis' weight in the family (Σ = K) and its level γ = α·w/K. */
  readonly weight: number;
  readonly gamma: number;
  readonly statisticalGate: { readonly passed: boolean; readonly eBH: boolean; readonly direction: boolean };
  readonly protocolGate: ConsistencyVerdict;
  readonly verdict: Verdict;
  readonly reason: string;
}

/** The sealed values of a hypothesis' signal, coded exactly as on the exploration split. */
function sealedValues(h: Hypothesis, table: CaseTable): Float64Array {
  const column = table.columns.get(h.column);
  if (!column) return new Float64Array(table.ids.length).fill(NaN);
  return codeValues(column, h.kind, h.level ?? "true");
}

/** Sealed cluster permutations: enough that the smallest share of α is reachable. */
const SEALED_PERMUTATIONS = 4999;

/**
 * A hypothesis' exploration evidence on the normal scale, for its share of α. Independent cases: z of the
 * exploration p-value. Clusters: the exploration effect's distance from the null over its bootstrap SE (the
 * interval's width / 3.92), because the permutation p-value stops at 1/(permutations + 1) and would give every
 * strong signal the same weight. Either way it reads the exploration split only.
 */
export function exploreEvidence(h: Hypothesis): number {
  const e = h.exploreEffect;
  if (h.exploreUnit === "cluster" && e.lo !== null && e.hi !== null && e.value !== null) {
    const se = (e.hi - e.lo) / 3.92;
    if (se > 0 && Number.isFinite(se)) return Math.abs(e.value - e.nullValue) / se;
  }
  return zOfP(h.exploreP);
}

/**
 * Decides each hypothesis on the sealed split.
 *
 * The K frozen hypotheses share α by weights fixed from the exploration split
 * (`familyWeights` of `exploreEvidence`); hypothesis k's one-sided sealed p-value becomes the e-value
 * 1/γ_k·1{p ≤ γ_k}, γ_k = α·w_k/K (`thresholdE`), and e-BH at α runs on w·e over
 * the family alone: the multiplicity paid is K, not the number of signals tried.
 * SUPPORTED: rejected by that e-BH, the sealed effect points the stated way, and
 * the protocol gate passes. REFUTED: the sealed 95% interval does not reach half
 * the exploration interval's end nearest the null in the stated direction
 * (`refuteMargin`). INCONCLUSIVE: neither, or the statistics pass but the
 * hypothesis does not answer the question asked.
 *
 * Example: `await verify(hypotheses, sealed.open("M4"), log, { alpha: 0.05, seed: 1, protocol })`.
 */
export async function verify(
  hypotheses: readonly Hypothesis[],
  sealed: CaseTable,
  log: EventLog,
  options: {
    readonly alpha: number;
    readonly seed: number;
    readonly protocol: ExperimentProtocol;
    readonly judge?: Judge;
    readonly resamples?: number;
    readonly calibrator?: Calibrator;
  },
): Promise<VerifiedHypothesis[]> {
  const rows = sealed.ids.map((_, i) => i);
  const K = hypotheses.length;
  const weights = familyWeights(hypotheses.map(exploreEvidence));
  const gammas = weights.map((w) => Math.min(1, (options.alpha * w) / Math.max(1, K)));
  const tested = hypotheses.map((h, k): Association => {
    const a = associate(h.kind, sealedValues(h, sealed), sealed.failed, rows, {
      alternative: h.direction,
      clusters: sealed.clusters,
      seed: options.seed,
      resamples: options.resamples ?? 2000,
      permutations: SEALED_PERMUTATIONS,
      ...(options.calibrator ? { calibrator: options.calibrator } : {}),
    });
    const gamma = gammas[k]!;
    return {
      ...a,
      e: a.untestable ? 0 : thresholdE(a.p, gamma),
      eMethod: `${THRESHOLD_METHOD}; here w = ${weights[k]!.toPrecision(3)}, γ = ${gamma.toPrecision(3)}`,
    };
  });
  const rejected = new Set(
    tested.length
      ? eBH(
          // w·e with e = 1/γ = K/(α·w) is K/α exactly; written so, rounding cannot drop it below e-BH's K/α.
          tested.map((a) => (a.e > 0 ? K / options.alpha : 0)),
          options.alpha,
        )
      : [],
  );
  const out: VerifiedHypothesis[] = [];
  for (const [k, h] of hypotheses.entries()) {
    const a = tested[k]!;
    const direction = a.observedDirection === h.direction;
    const statisticalGate = { eBH: rejected.has(k), direction, passed: rejected.has(k) && direction };
    const protocolGate = await consistency(
      options.protocol,
      `${h.statement}. Mechanism: ${h.mechanism}`,
      h.tags,
      options.judge,
    );
    const iv = a.effect.interval;
    const reach = h.direction > 0 ? iv.hi - a.effect.nullValue : a.effect.nullValue - iv.lo;
    let verdict: Verdict;
    let reason: string;
    if (a.untestable) {
      verdict = "INCONCLUSIVE";
      reason = `could not be tested on the sealed split: ${a.untestable}`;
    } else if (statisticalGate.passed && protocolGate.consistent) {
      verdict = "SUPPORTED";
      reason = `one-sided p = ${a.p.toPrecision(3)} ≤ γ = ${gammas[k]!.toPrecision(3)} (its share of α = ${options.alpha} over the ${K} frozen hypotheses), so e = ${a.e.toPrecision(3)} survives e-BH; ${a.testDescription}; effect in the stated direction, and ${protocolGate.reason}`;
    } else if (statisticalGate.passed) {
      verdict = "INCONCLUSIVE";
      reason = `the statistics support it, but it does not answer the question asked: ${protocolGate.reason}`;
    } else if (Number.isFinite(reach) && reach < h.refuteMargin) {
      verdict = "REFUTED";
      reason = `the sealed 95% interval [${iv.lo.toFixed(3)}, ${iv.hi.toFixed(3)}] does not reach half the exploration interval's end nearest the null (${h.refuteMargin.toFixed(3)} from the null) in the stated direction`;
    } else {
      verdict = "INCONCLUSIVE";
      reason = statisticalGate.eBH
        ? "the effect points the other way on the sealed split"
        : `one-sided p = ${a.p.toPrecision(3)} > γ = ${gammas[k]!.toPrecision(3)} (its share of α = ${options.alpha} over the ${K} frozen hypotheses, weight ${weights[k]!.toPrecision(3)} of ${K} from the exploration split's evidence; e = 0 does not survive e-BH), and the interval does not rule the stated effect out`;
    }
    const result = {
      id: h.id,
      association: a,
      weight: weights[k]!,
      gamma: gammas[k]!,
      statisticalGate,
      protocolGate,
      verdict,
      reason,
    };
    log.append("M4", "hypothesis.decided", { ...result });
    out.push(result);
  }
  return out;
}
