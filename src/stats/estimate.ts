import { clusteredSEOf } from "./clustered-se.ts";
import { zCritical } from "./distributions.ts";
import { meanSE } from "./mean-se.ts";
import { clusterIndex, finite, hasSharedCluster, isBinary, numbers, openUnit, options } from "./validate.ts";
import { wilson } from "./wilson.ts";

export interface EstimateOptions {
  /** Confidence level of the interval (default 0.95). */
  confidence?: number;
  /** The range scores can take, e.g. [0, 1]: values outside it are an error and the interval is clipped to it. */
  bounds?: readonly [number, number];
}

export interface Estimate {
  n: number;
  mean: number;
  /** Standard error of the mean (null when it cannot be estimated: one case, CLT method). */
  se: number | null;
  lo: number;
  hi: number;
  /** How the interval was made. */
  method: "wilson" | "clt" | "clustered";
}

/**
 * What is this run's score, and how sure are we? Picks the interval that fits the data:
 * - `clustered` when some cluster holds more than one case: mean ± z·clusteredSE;
 * - `wilson` when every value is 0 or 1 (se = √(p̂(1 − p̂)/n), the binomial SE);
 * - `clt` otherwise: mean ± z·(sample sd/√n).
 * With `bounds`, the interval is clipped to them; with one non-binary case there is no
 * spread to go on, so the interval is the bounds (or ±∞ without bounds) and se is null.
 *
 * @example estimate([1, 1, 0, 1]) // { n: 4, mean: 0.75, se: 0.2165, lo: 0.3006, hi: 0.9544, method: "wilson" }
 */
export function estimate(
  values: ArrayLike<number>,
  clusters?: ArrayLike<string | number>,
  opts?: EstimateOptions,
): Estimate {
  const fn = "estimate";
  const x = numbers(fn, "values", values, 1);
  const o = options<EstimateOptions>(fn, opts);
  const confidence = openUnit(fn, "confidence", o.confidence ?? 0.95);
  let lower = -Infinity;
  let upper = Infinity;
  if (o.bounds !== undefined) {
    if (!Array.isArray(o.bounds) || o.bounds.length !== 2) {
      throw new TypeError(`${fn}(): bounds must be a pair [lowest, highest], got ${typeof o.bounds}`);
    }
    lower = finite(fn, "bounds[0]", o.bounds[0]);
    upper = finite(fn, "bounds[1]", o.bounds[1]);
    if (!(lower < upper))
      throw new RangeError(`${fn}(): bounds must satisfy lowest < highest, got [${lower}, ${upper}]`);
    for (let i = 0; i < x.length; i++) {
      if (x[i]! < lower || x[i]! > upper) {
        throw new RangeError(`${fn}(): values[${i}] = ${x[i]} lies outside bounds [${lower}, ${upper}]`);
      }
    }
  }
  const n = x.length;
  const clip = (v: number) => Math.min(upper, Math.max(lower, v));
  const z = zCritical(confidence);
  const { mean, se } = meanSE(x);

  if (clusters !== undefined) {
    const { index, sizes, groups } = clusterIndex(fn, clusters, n);
    if (hasSharedCluster(sizes)) {
      const cse = clusteredSEOf(x, index, groups);
      return { n, mean, se: cse, lo: clip(mean - z * cse), hi: clip(mean + z * cse), method: "clustered" };
    }
  }
  if (isBinary(x)) {
    const [lo, hi] = wilson(Math.round(mean * n), n, confidence);
    return { n, mean, se: Math.sqrt((mean * (1 - mean)) / n), lo: clip(lo), hi: clip(hi), method: "wilson" };
  }
  if (se === null) return { n, mean, se: null, lo: lower, hi: upper, method: "clt" };
  return { n, mean, se, lo: clip(mean - z * se), hi: clip(mean + z * se), method: "clt" };
}
