import type { RandomGenerator } from "../../stats/rng.ts";
import { seededRng } from "../../stats/rng.ts";
import { checkPoints, kMeansWith, type KMeansResult, type Points } from "./kmeans.ts";
import { principalAxes } from "./principal-axes.ts";

const INV_TWO_32 = 1 / 4294967296;

export interface GapRow {
  readonly k: number;
  /** log of the within-group sum of squares of the best k-means fit. */
  readonly logW: number;
  /** Gap(k) = E*[log W_k] under the reference − log W_k. */
  readonly gap: number;
  /** The reference's standard deviation of log W_k, times √(1 + 1/B). */
  readonly s: number;
}

export interface GapResult {
  /** The smallest k with Gap(k) ≥ Gap(k+1) − s(k+1) (Tibshirani, Walther & Hastie 2001, the 1-SE rule). */
  readonly k: number;
  readonly rows: readonly GapRow[];
  /** The fit at each k (index k − 1). */
  readonly fits: readonly KMeansResult[];
}

export interface GapOptions {
  readonly seed?: number;
  /** Reference data sets. Default 20. */
  readonly references?: number;
  /** k-means starts per fit. Default 10. */
  readonly restarts?: number;
}

/**
 * How many groups do these points form — one included? The gap statistic:
 * for each k, how much tighter the k-means groups of the data are than those
 * of reference data spread uniformly over the box aligned with the data's
 * principal axes (data with no groups); the smallest k whose gap is within one
 * standard error of the next k's is the answer. A single Gaussian blob gives
 * k = 1, where silhouette alone always splits it.
 *
 * @example gapStatistic({ values: new Float64Array([0, 0.1, 0.2, 9, 9.1, 9.2]), d: 1 }, 3).k // 2
 */
export function gapStatistic(points: Points, maxK: number, options: GapOptions = {}): GapResult {
  const n = checkPoints("gapStatistic", points);
  if (!Number.isInteger(maxK) || maxK < 1)
    throw new RangeError(`gapStatistic(): maxK must be a positive integer, got ${maxK}`);
  const top = Math.min(maxK, n);
  const references = options.references ?? 20;
  if (!Number.isInteger(references) || references < 2)
    throw new RangeError(`gapStatistic(): references must be an integer ≥ 2, got ${references}`);
  const restarts = options.restarts ?? 10;
  const rng = seededRng("gapStatistic", options.seed ?? 0);
  const fits: KMeansResult[] = [];
  for (let k = 1; k <= top; k++) fits.push(kMeansWith(rng, points, k, restarts));
  const referenceLogW: number[][] = Array.from({ length: top }, () => []);
  const { axes, mean } = principalAxes(points);
  const box = projectedBox(points, axes, mean);
  for (let b = 0; b < references; b++) {
    const reference = uniformInBox(rng, n, points.d, box, axes, mean);
    // Fewer starts on the references: they have no groups to find, so starts differ little.
    for (let k = 1; k <= top; k++)
      referenceLogW[k - 1]!.push(logOf(kMeansWith(rng, reference, k, Math.min(restarts, 3)).inertia));
  }
  const rows: GapRow[] = fits.map((fit, i) => {
    const logs = referenceLogW[i]!;
    const m = logs.reduce((s, x) => s + x, 0) / logs.length;
    const sd = Math.sqrt(logs.reduce((s, x) => s + (x - m) ** 2, 0) / logs.length);
    const logW = logOf(fit.inertia);
    return { k: i + 1, logW, gap: m - logW, s: sd * Math.sqrt(1 + 1 / references) };
  });
  let k = top;
  for (let i = 0; i + 1 < rows.length; i++)
    if (rows[i]!.gap >= rows[i + 1]!.gap - rows[i + 1]!.s) {
      k = i + 1;
      break;
    }
  return { k, rows, fits };
}

/** Zero spread (all points equal) would give log 0: floor it so every k ties and k = 1 wins. */
function logOf(inertia: number): number {
  return Math.log(Math.max(inertia, 1e-300));
}

interface Box {
  readonly lo: Float64Array;
  readonly hi: Float64Array;
}

function projectedBox({ values, d }: Points, axes: Float64Array, mean: Float64Array): Box {
  const n = values.length / d;
  const lo = new Float64Array(d).fill(Infinity);
  const hi = new Float64Array(d).fill(-Infinity);
  for (let i = 0; i < n; i++)
    for (let r = 0; r < d; r++) {
      let y = 0;
      for (let c = 0; c < d; c++) y += axes[r * d + c]! * (values[i * d + c]! - mean[c]!);
      if (y < lo[r]!) lo[r] = y;
      if (y > hi[r]!) hi[r] = y;
    }
  return { lo, hi };
}

function uniformInBox(
  rng: RandomGenerator,
  n: number,
  d: number,
  { lo, hi }: Box,
  axes: Float64Array,
  mean: Float64Array,
): Points {
  const values = new Float64Array(n * d);
  const y = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < d; r++) y[r] = lo[r]! + (hi[r]! - lo[r]!) * ((rng.next() >>> 0) * INV_TWO_32);
    for (let c = 0; c < d; c++) {
      let x = mean[c]!;
      for (let r = 0; r < d; r++) x += axes[r * d + c]! * y[r]!;
      values[i * d + c] = x;
    }
  }
  return { values, d };
}
