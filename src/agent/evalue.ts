/**
 * How M2 and M4 turn a p-value into an e-value. An e-value is a non-negative
 * statistic with expectation at most 1 under the null; large values are
 * evidence against it, they stay valid under optional stopping, and e-BH over
 * them controls the false discovery rate under any dependence.
 */

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
