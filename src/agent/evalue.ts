/**
 * How M2 and M4 turn a p-value into an e-value. An e-value is a non-negative
 * statistic with expectation at most 1 under the null; large values are
 * evidence against it, they stay valid under optional stopping, and e-BH over
 * them controls the false discovery rate under any dependence.
 */

import { normalQuantile } from "../stats/distributions.ts";

/**
 * A p-value checked to lie in [0, 1], with an underflowed p (0) raised to the
 * smallest normal double so that every calibrator's e-value stays finite.
 */
function checkedP(caller: string, p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`${caller}: p-value ${p} must lie in [0, 1]`);
  return Math.max(p, 2.2250738585072014e-308);
}

/** The construction's name, as the report states it next to every e-value it produced. */
export const P_TO_E_METHOD =
  "p-to-e mixture calibrator e(p) = ∫₀¹ κ·p^(κ−1) dκ = (1 − p + p·ln p) / (p·ln²p) (Vovk & Wang 2021) applied to the test's p-value";

/**
 * The e-value of a p-value under the mixture calibrator: the average over κ in
 * (0, 1) of the calibrators κ·p^(κ−1), each of which integrates to 1 over a
 * uniform p, so the mixture is a valid e-value whenever p is a valid p-value.
 * It is larger than the single calibrator 1/(2√p) below p ≈ 0.004, where
 * decisions are made: p = 0.001 gives e ≈ 21 (vs 16), p = 1e-4 gives e ≈ 118.
 *
 * Example: `pToE(0.001)` ≈ 20.9; `pToE(0.5)` ≈ 0.85; `pToE(1)` = 0.5.
 */
export function pToE(p: number): number {
  const q = checkedP("pToE()", p);
  if (q === 1) return 0.5;
  const l = Math.log(q);
  return (1 - q + q * l) / (q * l * l);
}

/** The single calibrator 1/(2√p) (κ = ½), kept to measure what the mixture buys (`bench:validity`). */
export const SQRT_METHOD = "p-to-e calibrator e(p) = 1/(2√p) (κ = ½) applied to the test's p-value";

/** A p-to-e calibrator with the name the report states. */
export interface Calibrator {
  readonly method: string;
  readonly toE: (p: number) => number;
}

/** The calibrators by name; `mixture` is the default everywhere. */
export const CALIBRATORS: Record<"mixture" | "sqrt", Calibrator> = {
  mixture: { method: P_TO_E_METHOD, toE: pToE },
  sqrt: {
    method: SQRT_METHOD,
    toE: (p) => 1 / (2 * Math.sqrt(checkedP("CALIBRATORS.sqrt", p))),
  },
};

/**
 * The all-or-nothing calibrator at level γ: e(p) = 1/γ when p ≤ γ, else 0. Its mean over a
 * uniform p is exactly 1, so it is an e-value whenever p is a valid p-value; of all e-values
 * it is the largest at p ≤ γ, which is what a decision at the threshold 1/γ needs (Vovk &
 * Wang 2021). M4 and M5 use it at each hypothesis' (candidate's) share of α.
 *
 * Example: `thresholdE(0.01, 0.025)` = 40; `thresholdE(0.03, 0.025)` = 0.
 */
export function thresholdE(p: number, gamma: number): number {
  const q = checkedP("thresholdE()", p);
  if (!(gamma > 0 && gamma <= 1)) throw new RangeError(`thresholdE(): level ${gamma} must lie in (0, 1]`);
  return q <= gamma ? 1 / gamma : 0;
}

/** How M4's e-values are made, as the report states it. */
export const THRESHOLD_METHOD =
  "e = 1/γ·1{p ≤ γ} on the one-sided sealed p-value (all-or-nothing calibrator, Vovk & Wang 2021), γ = α·w/K: the hypothesis' share of α, with weights w (Σw = K) fixed from the exploration split's evidence before the sealed split is read; e-BH at α over the K frozen hypotheses on w·e (weighted e-BH, Wang & Ramdas 2022)";

/** Exploration z beyond which a hypothesis' weight stops growing (keeps exp(z²/2) finite). */
const MAX_Z = 8;

/** The two-sided p-value's normal quantile z = Φ⁻¹(1 − p/2): the evidence on the normal scale. */
export function zOfP(p: number): number {
  return Math.max(0, -normalQuantile(checkedP("zOfP()", p) / 2));
}

/**
 * How α is shared among the K frozen hypotheses: weight w_k ∝ exp(z_k²/2), the maximised likelihood ratio
 * of the exploration split's evidence z_k (capped at 8), normalised so that Σ w = K. The exploration split is
 * independent of the sealed one, so the weights are fixed data for M4 and weighted e-BH keeps its guarantee;
 * the hypothesis the exploration split believes most gets most of α instead of 1/K of it.
 *
 * Example: `familyWeights([zOfP(1e-6), zOfP(0.04)])` → `[1.9999, 0.0001]` (sums to 2).
 */
export function familyWeights(z: readonly number[]): number[] {
  const K = z.length;
  if (K === 0) return [];
  const logs = z.map((v) => {
    if (!(v >= 0)) throw new RangeError(`familyWeights(): evidence ${v} must be a number ≥ 0`);
    const c = Math.min(MAX_Z, v);
    return (c * c) / 2;
  });
  const top = Math.max(...logs);
  const raw = logs.map((l) => Math.exp(l - top));
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((r) => (K * r) / total);
}
