import { checkedOrder } from "./holm.ts";

/**
 * Which of many signals survive when a controlled fraction of false discoveries is
 * acceptable? Benjamini–Hochberg adjusted p-values: sorted ascending,
 * adj_(j) = min_{i≥j} min(1, m p_(i) / i); in input order. Reject where adjusted p ≤ α
 * (FDR ≤ α under independence or positive dependence).
 *
 * @example benjaminiHochberg([0.01, 0.04, 0.03]) // [0.03, 0.04, 0.04]
 */
export function benjaminiHochberg(p: ArrayLike<number>): number[] {
  const { values, order } = checkedOrder("benjaminiHochberg", p);
  const m = values.length;
  const out = new Array<number>(m);
  let running = 1;
  for (let j = m - 1; j >= 0; j--) {
    const i = order[j]!;
    // p·(m/(j+1)) rather than m·p/(j+1): the factor is ≥ 1 exactly, so adjusted p ≥ raw p survives rounding.
    running = Math.min(running, values[i]! * (m / (j + 1)));
    out[i] = Math.min(1, running);
  }
  return out;
}
