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
  method: "mcnemar-newcombe" | "bootstrap" | "cluster-bootstrap";
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
 * With 0/1 scores and independent cases: exact McNemar p-value and Newcombe's paired
 * interval. Otherwise (graded scores, or clusters holding several cases): the paired
 * bootstrap of B − A, resampling whole clusters when there are any. Counts of
 * regressed/fixed/both/neither are reported whenever both runs are 0/1.
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
  let clustered = false;
  if (clusters !== undefined) clustered = hasSharedCluster(clusterIndex(fn, clusters, n).sizes);

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
    if (!clustered) {
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
  for (let i = 0; i < n; i++) diffs[i] = y[i]! - x[i]!;
  const { lo, hi, p } = pairedBootstrap(diffs, clustered ? clusters : undefined, opts);
  return {
    n,
    a: meanA,
    b: meanB,
    diff: meanB - meanA,
    lo,
    hi,
    p,
    method: clustered ? "cluster-bootstrap" : "bootstrap",
    ...counts,
  };
}
