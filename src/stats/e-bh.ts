import { openUnit } from "./validate.ts";

/**
 * Which hypotheses can be rejected from their e-values while keeping the false discovery
 * rate ≤ α under any dependence between them? The e-BH procedure (Wang & Ramdas 2022):
 * with the K e-values sorted descending, k* = max{k : e_(k) ≥ K/(α k)}; the k* largest are
 * rejected. Returns their indices, ascending.
 *
 * @example eBH([50, 1, 30, 0.5], 0.1) // [0, 2]  (30 ≥ 4/(0.1·2) = 20)
 */
export function eBH(e: ArrayLike<number>, alpha: number): number[] {
  const fn = "eBH";
  if (e === null || typeof e !== "object" || typeof (e as { length?: unknown }).length !== "number") {
    throw new TypeError(`${fn}(): e must be an array of e-values`);
  }
  openUnit(fn, "alpha", alpha);
  const K = e.length;
  for (let i = 0; i < K; i++) {
    const v = e[i];
    if (typeof v !== "number") throw new TypeError(`${fn}(): e[${i}] must be a number, got ${typeof v}`);
    // +Infinity is a legitimate e-value (overwhelming evidence); NaN and negatives are not.
    if (Number.isNaN(v) || v < 0) throw new RangeError(`${fn}(): e[${i}] must be a non-negative e-value, got ${v}`);
  }
  const order = Array.from({ length: K }, (_, i) => i);
  order.sort((i, j) => e[j]! - e[i]! || i - j);
  let kStar = 0;
  for (let k = 1; k <= K; k++) if (e[order[k - 1]!]! >= K / (alpha * k)) kStar = k;
  return order.slice(0, kStar).sort((i, j) => i - j);
}
