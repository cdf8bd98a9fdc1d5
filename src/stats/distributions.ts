/**
 * The distribution functions the catalog rests on, taken from the `@stdlib`
 * packages (well-kept, accurate to a few ulps) rather than rewritten. Upper
 * tails are computed directly (never as 1 − cdf) so small p-values keep their
 * relative accuracy.
 */
import betaincFn from "@stdlib/math-base-special-betainc";
import betalnFn from "@stdlib/math-base-special-betaln";
import gammaincFn from "@stdlib/math-base-special-gammainc";
import gammalnFn from "@stdlib/math-base-special-gammaln";
import binomialCdfFn from "@stdlib/stats-base-dists-binomial-cdf";
import normalCdfFn from "@stdlib/stats-base-dists-normal-cdf";
import normalQuantileFn from "@stdlib/stats-base-dists-normal-quantile";
import tCdfFn from "@stdlib/stats-base-dists-t-cdf";
import tQuantileFn from "@stdlib/stats-base-dists-t-quantile";

/** Standard normal cdf Φ(z). */
export function normalCdf(z: number): number {
  return normalCdfFn(z, 0, 1);
}

/** Standard normal upper tail 1 − Φ(z), accurate for large z. */
export function normalSf(z: number): number {
  return normalCdfFn(-z, 0, 1);
}

/** Standard normal quantile Φ⁻¹(p). */
export function normalQuantile(p: number): number {
  return normalQuantileFn(p, 0, 1);
}

/** The two-sided critical value z_{1−(1−confidence)/2}. */
export function zCritical(confidence: number): number {
  // Φ⁻¹ of the upper tail, written as −Φ⁻¹((1−c)/2) so a small tail keeps its precision.
  return -normalQuantile((1 - confidence) / 2);
}

/** Student t cdf with `df` degrees of freedom. */
export function tCdf(t: number, df: number): number {
  return tCdfFn(t, df);
}

/** Student t quantile with `df` degrees of freedom. */
export function tQuantile(p: number, df: number): number {
  return tQuantileFn(p, df);
}

/** Chi-square upper tail P(X ≥ x), X ~ χ²(k), via the upper regularised gamma Q(k/2, x/2). */
export function chiSquareSf(x: number, k: number): number {
  if (x <= 0) return 1;
  return gammaincFn(x / 2, k / 2, true, true);
}

/** P(X ≤ x), X ~ Binomial(n, p). */
export function binomialCdf(x: number, n: number, p: number): number {
  return binomialCdfFn(x, n, p);
}

/** ln Γ(x). */
export function lnGamma(x: number): number {
  return gammalnFn(x);
}

/** ln B(a, b). */
export function lnBeta(a: number, b: number): number {
  return betalnFn(a, b);
}

/** Regularised incomplete beta I_x(a, b), or its upper tail 1 − I_x(a, b) when `upper`. */
export function betaInc(x: number, a: number, b: number, upper = false): number {
  return betaincFn(x, a, b, true, upper);
}
