import { unit } from "./validate.ts";

/** Checks an array of p-values and returns the indices that sort it ascending (stable). */
export function checkedOrder(fn: string, p: ArrayLike<number>): { values: Float64Array; order: number[] } {
  if (p === null || typeof p !== "object" || typeof (p as { length?: unknown }).length !== "number") {
    throw new TypeError(`${fn}(): p must be an array of p-values`);
  }
  const values = new Float64Array(p.length);
  for (let i = 0; i < p.length; i++) values[i] = unit(fn, `p[${i}]`, p[i]);
  const order = Array.from({ length: p.length }, (_, i) => i);
  order.sort((i, j) => values[i]! - values[j]!);
  return { values, order };
}

/**
 * Which of several tests survive when any single false positive counts (family-wise
 * error)? Holm's step-down adjustment: sorted ascending, adj_(j) = max_{i≤j} min(1, (m − i + 1) p_(i)).
 * Returned in input order; reject where adjusted p ≤ α.
 *
 * @example holm([0.01, 0.04, 0.03]) // [0.03, 0.06, 0.06]
 */
export function holm(p: ArrayLike<number>): number[] {
  const { values, order } = checkedOrder("holm", p);
  const m = values.length;
  const out = new Array<number>(m);
  let running = 0;
  for (let j = 0; j < m; j++) {
    const i = order[j]!;
    running = Math.max(running, Math.min(1, (m - j) * values[i]!));
    out[i] = running;
  }
  return out;
}
