import { clusterMeanOf } from "./cluster-mean.ts";
import { tQuantile, zCritical } from "./distributions.ts";
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
  /** Clustered: the number of clusters and the Bell–McCaffrey degrees of freedom of the t quantile used. */
  clusters?: number;
  df?: number;
  /** Set when the interval rests on few clusters (fewer than {@link FEW_CLUSTERS}). */
  warning?: string;
}

/** Below this many clusters a clustered interval carries a warning: its coverage depends on small-sample corrections. */
export const FEW_CLUSTERS = 20;

/** The warning a clustered interval over `groups` clusters carries, or undefined when there are enough. */
export function fewClustersWarning(groups: number): string | undefined {
  return groups < FEW_CLUSTERS
    ? `only ${groups} clusters: the interval uses small-sample corrections (CR2, Bell–McCaffrey df) and is approximate; its coverage was measured at about 92–95% with 5–10 clusters`
    : undefined;
}

/**
 * What is this run's score, and how sure are we? Picks the interval that fits the data:
 * - `clustered` when some cluster holds more than one case: the CR2 standard error with
 *   Bell–McCaffrey degrees of freedom (see `clusterMean`); for 0/1 values a Wilson interval at
 *   the effective sample size n_eff = p̂(1 − p̂)/se² (at most n) with the t quantile on those df
 *   (Korn & Graubard 1998), so it stays inside [0, 1] and behaves near 0 and 1; otherwise
 *   mean ± t·se. Under 20 clusters it carries a warning;
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
      if (groups === 1)
        return {
          n,
          mean,
          se: null,
          lo: lower,
          hi: upper,
          method: "clustered",
          clusters: 1,
          warning: "one cluster: its cases are not independent, so nothing can be said about the spread",
        };
      const c = clusterMeanOf(x, index, sizes, groups);
      const t = tQuantile(1 - (1 - confidence) / 2, c.df);
      const warning = fewClustersWarning(groups);
      const base = { n, mean, se: c.se, method: "clustered", clusters: groups, df: c.df } as const;
      if (isBinary(x)) {
        // Korn & Graubard: Wilson at the effective sample size; no spread (p̂ = 0 or 1, se = 0) keeps n.
        const spread = mean * (1 - mean);
        const nEff = spread > 0 && c.se > 0 ? Math.min(n, spread / (c.se * c.se)) : n;
        const den = 1 + (t * t) / nEff;
        const centre = (mean + (t * t) / (2 * nEff)) / den;
        const half = (t * Math.sqrt(spread / nEff + (t * t) / (4 * nEff * nEff))) / den;
        return {
          ...base,
          lo: clip(Math.max(0, centre - half)),
          hi: clip(Math.min(1, centre + half)),
          ...(warning ? { warning } : {}),
        };
      }
      return { ...base, lo: clip(mean - t * c.se), hi: clip(mean + t * c.se), ...(warning ? { warning } : {}) };
    }
  }
  if (isBinary(x)) {
    const [lo, hi] = wilson(Math.round(mean * n), n, confidence);
    return { n, mean, se: Math.sqrt((mean * (1 - mean)) / n), lo: clip(lo), hi: clip(hi), method: "wilson" };
  }
  if (se === null) return { n, mean, se: null, lo: lower, hi: upper, method: "clt" };
  return { n, mean, se, lo: clip(mean - z * se), hi: clip(mean + z * se), method: "clt" };
}
