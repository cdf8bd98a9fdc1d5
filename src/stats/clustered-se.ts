import { clusterIndex, numbers } from "./validate.ts";

/**
 * How precisely is the mean known when cases come in correlated clusters
 * (several questions about one image, several samples of one prompt)?
 * The cluster-robust standard error √(Σ_c (Σ_{i∈c} (s_i − s̄))²) / n, with no
 * small-sample correction (statsmodels' cluster covariance with `use_correction=False`).
 *
 * @example clusteredSE([1, 1, 0, 0], ["a", "a", "b", "b"]) // 0.3536 (= √2 / 4)
 */
export function clusteredSE(values: ArrayLike<number>, clusters: ArrayLike<string | number>): number {
  const x = numbers("clusteredSE", "values", values, 1);
  const { index, groups } = clusterIndex("clusteredSE", clusters, x.length);
  return clusteredSEOf(x, index, groups);
}

/** {@link clusteredSE} on values and cluster indices already checked (see `clusterIndex`). */
export function clusteredSEOf(x: Float64Array, index: Int32Array, groups: number): number {
  const n = x.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[i]!;
  const mean = sum / n;
  const resid = new Float64Array(groups);
  for (let i = 0; i < n; i++) resid[index[i]!]! += x[i]! - mean;
  let ss = 0;
  for (let g = 0; g < groups; g++) ss += resid[g]! * resid[g]!;
  return Math.sqrt(ss) / n;
}
