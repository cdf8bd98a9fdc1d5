import { normalSf } from "./distributions.ts";
import { rankAverage } from "./rank.ts";
import { numbers } from "./validate.ts";

/**
 * Does a numeric signal tend to be larger on failing cases (x) than on passing ones (y)?
 * Mann–Whitney U, two-sided, normal approximation with tie and continuity corrections
 * (as `scipy.stats.mannwhitneyu(x, y, method="asymptotic")`). `u` is U for x, and
 * `auc` = U_x/(n_x n_y) is the probability that a random x exceeds a random y (ties
 * count ½). When every value is tied, p = 1.
 *
 * @example mannWhitneyU([3, 4, 5], [1, 2]) // { u: 6, p: 0.1489, auc: 1 }
 */
export function mannWhitneyU(x: ArrayLike<number>, y: ArrayLike<number>): { u: number; p: number; auc: number } {
  const fn = "mannWhitneyU";
  const a = numbers(fn, "x", x, 1);
  const b = numbers(fn, "y", y, 1);
  const n1 = a.length;
  const n2 = b.length;
  const all = new Float64Array(n1 + n2);
  all.set(a, 0);
  all.set(b, n1);
  const { ranks, tieTerm } = rankAverage(all);
  let r1 = 0;
  for (let i = 0; i < n1; i++) r1 += ranks[i]!;
  const u1 = r1 - (n1 * (n1 + 1)) / 2;
  const u2 = n1 * n2 - u1;
  const u = Math.max(u1, u2);
  const n = n1 + n2;
  const mu = (n1 * n2) / 2;
  const s = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  let p = 1;
  if (s > 0) p = Math.min(1, Math.max(0, 2 * normalSf((u - mu - 0.5) / s)));
  return { u: u1, p, auc: u1 / (n1 * n2) };
}
