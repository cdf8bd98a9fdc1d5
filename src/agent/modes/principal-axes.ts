import { checkPoints, type Points } from "./kmeans.ts";

export interface PrincipalAxes {
  /** d×d, row r is the r-th axis (unit length). */
  readonly axes: Float64Array;
  /** The variance along each axis, descending. */
  readonly variances: Float64Array;
  /** The points' mean. */
  readonly mean: Float64Array;
}

/**
 * Along which directions do these points spread, and by how much? The
 * eigenvectors of their covariance matrix (principal axes), largest variance
 * first, by cyclic Jacobi rotations: exact to rounding for the few dozen
 * coordinates a case's signals have.
 *
 * @example
 * principalAxes({ values: new Float64Array([0, 0, 1, 1, 2, 2]), d: 2 }).axes // ≈ [0.7071, 0.7071, -0.7071, 0.7071] (rows; signs may differ)
 */
export function principalAxes(points: Points): PrincipalAxes {
  const n = checkPoints("principalAxes", points);
  const { values, d } = points;
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let c = 0; c < d; c++) mean[c]! += values[i * d + c]! / n;
  const a = new Float64Array(d * d);
  for (let i = 0; i < n; i++)
    for (let r = 0; r < d; r++) {
      const x = values[i * d + r]! - mean[r]!;
      for (let c = r; c < d; c++) a[r * d + c]! += (x * (values[i * d + c]! - mean[c]!)) / Math.max(1, n - 1);
    }
  for (let r = 0; r < d; r++) for (let c = 0; c < r; c++) a[r * d + c] = a[c * d + r]!;
  const v = new Float64Array(d * d);
  for (let r = 0; r < d; r++) v[r * d + r] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < d; p++) for (let q = p + 1; q < d; q++) off += a[p * d + q]! ** 2;
    if (off < 1e-30) break;
    for (let p = 0; p < d; p++)
      for (let q = p + 1; q < d; q++) {
        const apq = a[p * d + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * d + q]! - a[p * d + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const cos = 1 / Math.sqrt(t * t + 1);
        const sin = t * cos;
        for (let k = 0; k < d; k++) {
          const akp = a[k * d + p]!;
          const akq = a[k * d + q]!;
          a[k * d + p] = cos * akp - sin * akq;
          a[k * d + q] = sin * akp + cos * akq;
        }
        for (let k = 0; k < d; k++) {
          const apk = a[p * d + k]!;
          const aqk = a[q * d + k]!;
          a[p * d + k] = cos * apk - sin * aqk;
          a[q * d + k] = sin * apk + cos * aqk;
        }
        for (let k = 0; k < d; k++) {
          const vkp = v[k * d + p]!;
          const vkq = v[k * d + q]!;
          v[k * d + p] = cos * vkp - sin * vkq;
          v[k * d + q] = sin * vkp + cos * vkq;
        }
      }
  }
  const order = Array.from({ length: d }, (_, i) => i).sort((x, y) => a[y * d + y]! - a[x * d + x]!);
  const axes = new Float64Array(d * d);
  const variances = new Float64Array(d);
  order.forEach((col, r) => {
    variances[r] = Math.max(0, a[col * d + col]!);
    for (let k = 0; k < d; k++) axes[r * d + k] = v[k * d + col]!;
  });
  return { axes, variances, mean };
}
