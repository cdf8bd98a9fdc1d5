/**
 * M4 verify: each frozen hypothesis decided once on the sealed split. The
 * statistical gate runs the same test one-sided in the stated direction,
 * e-BH at α over the hypotheses tested, and checks the effect's direction;
 * the protocol-consistency gate asks whether it answers the question asked.
 */
import { eBH } from "../stats/index.ts";
import { associate, type Association } from "./association.ts";
import type { Hypothesis } from "./diagnose.ts";
import type { Calibrator } from "./evalue.ts";
import type { EventLog } from "./events.ts";
import { consistency, type Judge } from "./judge.ts";
import type { ConsistencyVerdict, ExperimentProtocol } from "./protocol.ts";
import { codeValues, type CaseTable } from "./signals.ts";

export type Verdict = "SUPPORTED" | "REFUTED" | "INCONCLUSIVE";

export interface VerifiedHypothesis {
  readonly id: string;
  readonly association: Association;
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

/**
 * Decides each hypothesis on the sealed split.
 *
 * SUPPORTED: the one-sided test's e-value is rejected by e-BH at α over the
 * hypotheses tested, the sealed effect points the stated way, and the protocol
 * gate passes. REFUTED: the sealed 95% interval does not reach half the
 * exploration effect in the stated direction. INCONCLUSIVE: neither, or the
 * statistics pass but the hypothesis does not answer the question asked.
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
  const tested = hypotheses.map((h) =>
    associate(h.kind, sealedValues(h, sealed), sealed.failed, rows, {
      alternative: h.direction,
      clusters: sealed.clusters,
      seed: options.seed,
      resamples: options.resamples ?? 2000,
      ...(options.calibrator ? { calibrator: options.calibrator } : {}),
    }),
  );
  const rejected = new Set(
    tested.length
      ? eBH(
          tested.map((a) => a.e),
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
      reason = `e = ${a.e.toPrecision(3)} survives e-BH at α = ${options.alpha} over ${hypotheses.length} hypotheses, effect in the stated direction, and ${protocolGate.reason}`;
    } else if (statisticalGate.passed) {
      verdict = "INCONCLUSIVE";
      reason = `the statistics support it, but it does not answer the question asked: ${protocolGate.reason}`;
    } else if (Number.isFinite(reach) && reach < h.refuteMargin) {
      verdict = "REFUTED";
      reason = `the sealed 95% interval [${iv.lo.toFixed(3)}, ${iv.hi.toFixed(3)}] does not reach half the exploration effect (${h.refuteMargin.toFixed(3)} from the null) in the stated direction`;
    } else {
      verdict = "INCONCLUSIVE";
      reason = statisticalGate.eBH
        ? "the effect points the other way on the sealed split"
        : `e = ${a.e.toPrecision(3)} does not survive e-BH at α = ${options.alpha}, and the interval does not rule the stated effect out`;
    }
    const result = { id: h.id, association: a, statisticalGate, protocolGate, verdict, reason };
    log.append("M4", "hypothesis.decided", { ...result });
    out.push(result);
  }
  return out;
}
