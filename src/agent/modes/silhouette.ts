import { checkPoints, squaredDistance, type Points } from "./kmeans.ts";

/**
 * How well does each point sit in its own group rather than the nearest other
 * one? The mean silhouette (Rousseeuw 1987) over all points, from −1 to 1:
 * s(i) = (b − a) / max(a, b), with a the mean distance to the rest of its
 * group and b the least mean distance to another group; a point alone in its
 * group counts 0. Above 0.5 is reasonable structure, under 0.25 none to speak of
 * (Kaufman & Rousseeuw 1990).
 *
 * @example silhouette({ values: new Float64Array([0, 1, 10, 11]), d: 1 }, [0, 0, 1, 1]) // ≈ 0.9
 */
export function silhouette(points: Points, assignments: ArrayLike<number>): number {
  const n = checkPoints("silhouette", points);
  if (assignments.length !== n) throw new RangeError(`silhouette(): ${assignments.length} assignments for ${n} points`);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const g = assignments[i]!;
    if (!Number.isInteger(g) || g < 0)
      throw new RangeError(`silhouette(): assignment ${i} is ${g}, not a group number`);
    k = Math.max(k, g + 1);
  }
  const sizes = new Int32Array(k);
  for (let i = 0; i < n; i++) sizes[assignments[i]!]!++;
  if (sizes.filter((s) => s > 0).length < 2) throw new RangeError("silhouette(): needs at least two non-empty groups");
  const { values, d } = points;
  const sums = new Float64Array(k);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const own = assignments[i]!;
    if (sizes[own] === 1) continue;
    sums.fill(0);
    for (let j = 0; j < n; j++)
      if (j !== i) sums[assignments[j]!]! += Math.sqrt(squaredDistance(values, i, values, j, d));
    const a = sums[own]! / (sizes[own]! - 1);
    let b = Infinity;
    for (let g = 0; g < k; g++) if (g !== own && sizes[g]! > 0) b = Math.min(b, sums[g]! / sizes[g]!);
    const m = Math.max(a, b);
    total += m === 0 ? 0 : (b - a) / m;
  }
  return total / n;
}
