import { betaInc, lnBeta } from "./distributions.ts";
import { count, openUnit, options, positive } from "./validate.ts";

export interface EValueOptions {
  /** Beta prior's first shape (default 1: uniform prior). */
  a?: number;
  /** Beta prior's second shape (default 1). */
  b?: number;
  /** Which rates count as evidence: any θ ≠ p0, only θ > p0, or only θ < p0. */
  alternative?: "two-sided" | "greater" | "less";
}

/**
 * The natural logarithm of {@link eValueBinomial}: use it to combine e-values across
 * stages by adding, or when the evidence is beyond double range (e > 1e308).
 *
 * @example logEValueBinomial(9, 10) // ln(9.309…) = 2.2310
 */
export function logEValueBinomial(k: number, n: number, p0 = 0.5, opts?: EValueOptions): number {
  return logEValue("logEValueBinomial", k, n, p0, opts);
}

/** The log e-value, with errors naming `fn` (the public function the caller used). */
export function logEValue(fn: string, k: number, n: number, p0: number, opts?: EValueOptions): number {
  count(fn, "k", k);
  count(fn, "n", n);
  if (k > n) throw new RangeError(`${fn}(): ${k} successes out of ${n} trials`);
  openUnit(fn, "p0", p0);
  const o = options<EValueOptions>(fn, opts);
  const a = positive(fn, "a", o.a ?? 1);
  const b = positive(fn, "b", o.b ?? 1);
  const alternative = o.alternative ?? "two-sided";
  if (alternative !== "two-sided" && alternative !== "greater" && alternative !== "less") {
    throw new RangeError(`${fn}(): alternative must be "two-sided", "greater" or "less", got ${String(alternative)}`);
  }
  // ln of the null likelihood p0^k (1 − p0)^(n − k); k·ln p0 with k = 0 is 0, not NaN.
  const lnNull = (k > 0 ? k * Math.log(p0) : 0) + (n - k > 0 ? (n - k) * Math.log1p(-p0) : 0);
  let lnE = lnBeta(a + k, b + n - k) - lnBeta(a, b) - lnNull;
  if (alternative !== "two-sided") {
    // Prior restricted to one side of p0 and renormalised: multiply by
    // P_posterior(side) / P_prior(side), both regularised incomplete betas (upper tails computed directly).
    const upper = alternative === "greater";
    const post = betaInc(p0, a + k, b + n - k, upper);
    const prior = betaInc(p0, a, b, upper);
    lnE += Math.log(post) - Math.log(prior);
  }
  return lnE;
}

/**
 * How much evidence do k successes in n trials carry against the rate being p0?
 * An e-value: the Beta(a, b)-mixture likelihood ratio
 *   ∫ θ^k (1−θ)^(n−k) dBeta(θ; a, b) / (p0^k (1−p0)^(n−k)) = B(a + k, b + n − k) / (B(a, b) p0^k (1−p0)^(n−k)),
 * with the prior restricted to θ > p0 (`greater`) or θ < p0 (`less`) and renormalised
 * for a one-sided alternative. Its mean under the null is 1, so it stays valid under
 * optional stopping; 1/e is a conservative p-value. Computed in log space (see
 * {@link logEValueBinomial}); the result is Infinity only when e exceeds ~1e308, and 0
 * only when it is below ~1e-308.
 *
 * @example eValueBinomial(9, 10) // 9.309 (= B(10, 2)/(B(1, 1)·0.5^10) = 1024/110)
 */
export function eValueBinomial(k: number, n: number, p0 = 0.5, opts?: EValueOptions): number {
  return Math.exp(logEValue("eValueBinomial", k, n, p0, opts));
}
