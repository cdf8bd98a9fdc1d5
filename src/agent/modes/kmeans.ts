import { seededRng, type RandomGenerator } from "../../stats/rng.ts";

const INV_TWO_32 = 1 / 4294967296;

/** Points as one row-major array: point i is `values[i·d … i·d + d)`. */
export interface Points {
  readonly values: Float64Array;
  /** Coordinates per point. */
  readonly d: number;
}

export interface KMeansResult {
  /** Group of each point, 0…k−1, numbered in order of first appearance (point 0 is in group 0). */
  readonly assignments: Int32Array;
  /** k·d centroid coordinates, row-major, in the same numbering. */
  readonly centroids: Float64Array;
  /** Sum of squared distances from each point to its centroid (the within-group sum of squares). */
  readonly inertia: number;
  readonly k: number;
}

export interface KMeansOptions {
  /** Default 0. The same seed gives the same groups in Node and in the browser. */
  readonly seed?: number;
  /** Independent k-means++ starts; the one with the least inertia is kept. Default 10. */
  readonly restarts?: number;
  /** Lloyd iterations per start at most. Default 100. */
  readonly maxIterations?: number;
}

/**
 * Which split of these points into `k` groups puts each point nearest its
 * group's mean? Lloyd's k-means from k-means++ seeding (Arthur & Vassilvitskii
 * 2007), the best of several seeded starts by inertia. Deterministic for a seed.
 *
 * @example
 * kMeans({ values: new Float64Array([0, 0.2, 5, 5.2, 0.1]), d: 1 }, 2).assignments // Int32Array [0, 0, 1, 1, 0]
 */
export function kMeans(points: Points, k: number, options: KMeansOptions = {}): KMeansResult {
  const n = checkPoints("kMeans", points);
  if (!Number.isInteger(k) || k < 1 || k > n)
    throw new RangeError(`kMeans(): k must be an integer from 1 to the number of points (${n}), got ${k}`);
  const restarts = options.restarts ?? 10;
  if (!Number.isInteger(restarts) || restarts < 1)
    throw new RangeError(`kMeans(): restarts must be a positive integer, got ${restarts}`);
  const rng = seededRng("kMeans", options.seed ?? 0);
  return kMeansWith(rng, points, k, restarts, options.maxIterations ?? 100);
}

/** {@link kMeans} drawing from a generator the caller owns (many fits in one seeded procedure). */
export function kMeansWith(
  rng: RandomGenerator,
  points: Points,
  k: number,
  restarts: number,
  maxIterations = 100,
): KMeansResult {
  let best: KMeansResult | undefined;
  for (let r = 0; r < restarts; r++) {
    const fit = lloyd(points, seedPlusPlus(rng, points, k), k, maxIterations);
    if (!best || fit.inertia < best.inertia - 1e-12 * Math.max(1, best.inertia)) best = fit;
  }
  return relabelByFirstAppearance(best!, points.d);
}

export function checkPoints(fn: string, points: Points): number {
  const { values, d } = points;
  if (!Number.isInteger(d) || d < 1) throw new RangeError(`${fn}(): d must be a positive integer, got ${d}`);
  if (values.length === 0 || values.length % d !== 0)
    throw new RangeError(`${fn}(): ${values.length} values are not a whole number of points of ${d} coordinate(s)`);
  for (let i = 0; i < values.length; i++)
    if (!Number.isFinite(values[i]!))
      throw new RangeError(`${fn}(): coordinate ${i % d} of point ${Math.floor(i / d)} is ${values[i]}, not finite`);
  return values.length / d;
}

export function squaredDistance(a: Float64Array, i: number, b: Float64Array, j: number, d: number): number {
  let s = 0;
  for (let c = 0; c < d; c++) {
    const diff = a[i * d + c]! - b[j * d + c]!;
    s += diff * diff;
  }
  return s;
}

function uniform(rng: RandomGenerator): number {
  return (rng.next() >>> 0) * INV_TWO_32;
}

/** k-means++: each next centre drawn with probability ∝ squared distance to the nearest centre so far. */
function seedPlusPlus(rng: RandomGenerator, { values, d }: Points, k: number): Float64Array {
  const n = values.length / d;
  const centres = new Float64Array(k * d);
  const nearest = new Float64Array(n).fill(Infinity);
  let pick = Math.floor(uniform(rng) * n);
  for (let c = 0; c < k; c++) {
    centres.set(values.subarray(pick * d, pick * d + d), c * d);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const dist = squaredDistance(values, i, centres, c, d);
      if (dist < nearest[i]!) nearest[i] = dist;
      total += nearest[i]!;
    }
    if (c === k - 1) break;
    if (total === 0) {
      pick = Math.floor(uniform(rng) * n); // every point sits on a centre: any point will do
      continue;
    }
    let target = uniform(rng) * total;
    pick = n - 1;
    for (let i = 0; i < n; i++) {
      target -= nearest[i]!;
      if (target < 0) {
        pick = i;
        break;
      }
    }
  }
  return centres;
}

function lloyd({ values, d }: Points, centroids: Float64Array, k: number, maxIterations: number): KMeansResult {
  const n = values.length / d;
  const assignments = new Int32Array(n).fill(-1);
  const sums = new Float64Array(k * d);
  const sizes = new Int32Array(k);
  let inertia = 0;
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    let changed = false;
    inertia = 0;
    const distances = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let bestGroup = 0;
      let bestDistance = Infinity;
      for (let c = 0; c < k; c++) {
        const dist = squaredDistance(values, i, centroids, c, d);
        if (dist < bestDistance) {
          bestDistance = dist;
          bestGroup = c;
        }
      }
      if (assignments[i] !== bestGroup) {
        assignments[i] = bestGroup;
        changed = true;
      }
      distances[i] = bestDistance;
      inertia += bestDistance;
    }
    if (!changed) break;
    sums.fill(0);
    sizes.fill(0);
    for (let i = 0; i < n; i++) {
      const c = assignments[i]!;
      sizes[c]!++;
      for (let j = 0; j < d; j++) sums[c * d + j]! += values[i * d + j]!;
    }
    for (let c = 0; c < k; c++) {
      if (sizes[c] === 0) {
        // An emptied group takes the point farthest from its centroid, so k groups stay k.
        let far = 0;
        for (let i = 1; i < n; i++) if (distances[i]! > distances[far]!) far = i;
        centroids.set(values.subarray(far * d, far * d + d), c * d);
        distances[far] = 0;
        continue;
      }
      for (let j = 0; j < d; j++) centroids[c * d + j] = sums[c * d + j]! / sizes[c]!;
    }
  }
  return { assignments, centroids, inertia, k };
}

function relabelByFirstAppearance(fit: KMeansResult, d: number): KMeansResult {
  const order = new Int32Array(fit.k).fill(-1);
  let next = 0;
  for (const group of fit.assignments) if (order[group] === -1) order[group] = next++;
  for (let c = 0; c < fit.k; c++) if (order[c] === -1) order[c] = next++;
  const assignments = fit.assignments.map((group) => order[group]!);
  const centroids = new Float64Array(fit.centroids.length);
  for (let c = 0; c < fit.k; c++) centroids.set(fit.centroids.subarray(c * d, c * d + d), order[c]! * d);
  return { assignments, centroids, inertia: fit.inertia, k: fit.k };
}
