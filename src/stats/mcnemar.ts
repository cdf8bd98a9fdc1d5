import { binomialCdf } from "./distributions.ts";
import { count } from "./validate.ts";

/**
 * Did paired runs A and B really differ, judged on the cases where they disagree?
 * Exact two-sided McNemar test on the discordant counts b (A passed, B failed) and
 * c (A failed, B passed): p = min(1, 2·P(X ≤ min(b, c))), X ~ Binomial(b + c, ½);
 * p = 1 when there is no disagreement. Returns the p-value.
 *
 * @example mcnemar(10, 2) // 0.0386 (2·P(X ≤ 2), X ~ Bin(12, ½))
 */
export function mcnemar(b: number, c: number): number {
  count("mcnemar", "b", b);
  count("mcnemar", "c", c);
  const n = b + c;
  if (n === 0) return 1;
  return Math.min(1, 2 * binomialCdf(Math.min(b, c), n, 0.5));
}
