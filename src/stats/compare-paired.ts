import { adjustedPaired } from "./adjusted-paired.ts";
import { clusterMeanOf } from "./cluster-mean.ts";
import { tCdf, tQuantile, zCritical } from "./distributions.ts";
import { fewClustersWarning } from "./estimate.ts";
import { mcnemar } from "./mcnemar.ts";
import { newcombePaired } from "./newcombe-paired.ts";
import { bootstrapSettings, pairedBootstrap, type BootstrapOptions } from "./paired-bootstrap.ts";
import { clusterIndex, hasSharedCluster, isBinary, numbers, sameLength } from "./validate.ts";

/** The verdict of a paired comparison of run B against run A on the same cases. */
export interface Comparison {
  /** Number of paired cases. */
  n: number;
  /** Mean score of run A. */
  a: number;
  /** Mean score of run B. */
  b: number;
  /** b − a. */
  diff: number;
  /** Interval for b − a at the requested confidence. */
  lo: number;
  hi: number;
  /** Two-sided p-value for "no difference". */
  p: number;
  /**
   * How the interval and p were made: exact McNemar + Newcombe (0/1, independent cases),
   * Agresti–Min-adjusted t (graded, independent), cluster-robust t (CR2, Bell–McCaffrey df,
   * clusters), or the (cluster) bootstrap (differences beyond ±1).
   */
  method: "mcnemar-newcombe" | "adjusted-t" | "cluster-t" | "bootstrap" | "cluster-bootstrap";
  /** Number of clusters (clustered methods). */
  clusters?: number;
  /** Degrees of freedom of the t quantile (t methods). */
  df?: number;
  /** Set when a clustered comparison rests on fewer than 20 clusters. */
  warning?: string;
  /** Cases A passed and B failed (binary scores only). */
  regressed?: number;
  /** Cases A failed and B passed (binary scores only). */
  fixed?: number;
  /** Cases both passed (binary scores only). */
  both?: number;
  /** Cases both failed (binary scores only). */
  neither?: number;
}

export type CompareOptions = BootstrapOptions;

/**
 * Did run B score differently from run A on the same cases, by how much, and how sure is that?
 * - 0/1 scores, independent cases: exact McNemar p-value and Newcombe's paired interval;
 * - graded scores (shares of repeats), independent cases: Agresti–Min's adjusted interval
 *   (`adjustedPaired`), which holds its coverage at n = 30 where the bootstrap does not;
 * - clusters holding several cases: the cluster-robust t on the per-case differences (CR2
 *   with Bell–McCaffrey df, `clusterMean`), its half-width never below z/(n + 2) — one more
 *   disagreeing case — so a sample where no case disagrees still gets an honest interval;
 *   under 20 clusters it carries a warning;
 * - differences beyond ±1 (scores not in [0, 1]): the paired (cluster) bootstrap.
 * Counts of regressed/fixed/both/neither are reported whenever both runs are 0/1.
 *
 * @example comparePaired([1,1,1,1,1,1,1,1,1,1,0,0], [0,0,0,0,0,0,0,0,0,1,1,1])
 *   // { n: 12, a: 0.833, b: 0.25, diff: −0.583, lo: −0.848, hi: −0.052, p: 0.0654,
 *   //   method: "mcnemar-newcombe", regressed: 9, fixed: 2, both: 1, neither: 0 }
 */
export function comparePaired(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  clusters?: ArrayLike<string | number>,
  opts?: CompareOptions,
): Comparison {
  const fn = "comparePaired";
  const x = numbers(fn, "a", a, 1);
  const y = numbers(fn, "b", b, 1);
  sameLength(fn, "a", x.length, "b", y.length);
  // checked here so a bad option is reported as comparePaired's, whichever method runs
  const { confidence } = bootstrapSettings(fn, opts);
  const n = x.length;
  let sa = 0;
  let sb = 0;
  for (let i = 0; i < n; i++) {
    sa += x[i]!;
    sb += y[i]!;
  }
  const meanA = sa / n;
  const meanB = sb / n;
  let cluster: ReturnType<typeof clusterIndex> | undefined;
  if (clusters !== undefined) {
    const c = clusterIndex(fn, clusters, n);
    if (hasSharedCluster(c.sizes)) cluster = c;
  }

  let counts: { regressed: number; fixed: number; both: number; neither: number } | undefined;
  if (isBinary(x) && isBinary(y)) {
    let both = 0;
    let regressed = 0;
    let fixed = 0;
    let neither = 0;
    for (let i = 0; i < n; i++) {
      if (x[i] === 1) {
        if (y[i] === 1) both++;
        else regressed++;
      } else if (y[i] === 1) fixed++;
      else neither++;
    }
    counts = { regressed, fixed, both, neither };
    if (!cluster) {
      const [lo, hi] = newcombePaired(both, regressed, fixed, neither, confidence);
      return {
        n,
        a: meanA,
        b: meanB,
        diff: (fixed - regressed) / n,
        lo,
        hi,
        p: mcnemar(regressed, fixed),
        method: "mcnemar-newcombe",
        ...counts,
      };
    }
  }
  const diffs = new Float64Array(n);
  let bounded = true;
  for (let i = 0; i < n; i++) {
    diffs[i] = y[i]! - x[i]!;
    if (Math.abs(diffs[i]!) > 1) bounded = false;
  }
  const base = { n, a: meanA, b: meanB, diff: meanB - meanA };
  if (bounded && cluster) {
    const { index, sizes, groups } = cluster;
    const c = clusterMeanOf(diffs, index, sizes, groups);
    const t = tQuantile(1 - (1 - confidence) / 2, c.df);
    const half = Math.max(t * c.se, zCritical(confidence) / (n + 2));
    const seEff = half / t;
    const warning = fewClustersWarning(groups);
    return {
      ...base,
      lo: c.mean - half,
      hi: c.mean + half,
      p: Math.min(1, 2 * tCdf(-Math.abs(c.mean) / seEff, c.df)),
      method: "cluster-t",
      clusters: groups,
      df: c.df,
      ...(warning ? { warning } : {}),
      ...counts,
    };
  }
  if (bounded) {
    const r = adjustedPaired(diffs, { confidence });
    return { ...base, lo: r.lo, hi: r.hi, p: r.p, method: "adjusted-t", df: Math.max(1, n - 1), ...counts };
  }
  const { lo, hi, p } = pairedBootstrap(diffs, cluster ? clusters : undefined, opts);
  return {
    ...base,
    lo,
    hi,
    p,
    method: cluster ? "cluster-bootstrap" : "bootstrap",
    ...(cluster ? { clusters: cluster.groups } : {}),
    ...counts,
  };
}
