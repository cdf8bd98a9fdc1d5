import { zCritical } from "./distributions.ts";
import { count, openUnit } from "./validate.ts";

/**
 * Which success rates are consistent with `successes` out of `n` independent trials?
 * The Wilson score interval: good coverage even for small n and rates near 0 or 1,
 * and exactly 0 (1) at the lower (upper) end when there are no failures (successes).
 *
 * @example wilson(45, 50) // ≈ [0.7864, 0.9565]
 */
export function wilson(successes: number, n: number, confidence = 0.95): [lo: number, hi: number] {
  count("wilson", "successes", successes);
  count("wilson", "n", n);
  openUnit("wilson", "confidence", confidence);
  if (n === 0) throw new RangeError("wilson(): n must be at least 1 trial, got 0");
  if (successes > n) throw new RangeError(`wilson(): ${successes} successes out of ${n} trials`);
  const z = zCritical(confidence);
  const z2 = z * z;
  const p = successes / n;
  const denom = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // At the ends the algebra gives 0 / 1 up to rounding; state them exactly.
  const lo = successes === 0 ? 0 : Math.max(0, center - half);
  const hi = successes === n ? 1 : Math.min(1, center + half);
  return [lo, hi];
}
