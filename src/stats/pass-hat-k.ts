import { count } from "./validate.ts";

/**
 * If a case passed `passes` of `trials` independent attempts, how likely is it to pass
 * all of k fresh attempts? The unbiased estimator pass^k = C(passes, k) / C(trials, k).
 *
 * @example passHatK(4, 5, 3) // 0.4  (= C(4,3)/C(5,3) = 4/10)
 */
export function passHatK(passes: number, trials: number, k: number): number {
  count("passHatK", "passes", passes);
  count("passHatK", "trials", trials);
  count("passHatK", "k", k);
  if (trials === 0) throw new RangeError("passHatK(): trials must be at least 1, got 0");
  if (passes > trials) throw new RangeError(`passHatK(): ${passes} passes out of ${trials} trials`);
  if (k > trials) {
    throw new RangeError(`passHatK(): k = ${k} exceeds the ${trials} trials; k must be at most trials`);
  }
  if (passes < k) return 0;
  // C(p,k)/C(t,k) = Π_{i<k} (p − i)/(t − i): each factor ≤ 1, so no overflow for any size.
  let r = 1;
  for (let i = 0; i < k; i++) r *= (passes - i) / (trials - i);
  return r;
}
