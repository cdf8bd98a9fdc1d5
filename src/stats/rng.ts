/**
 * The seeded generator behind every resampling routine: pure-rand's
 * xoroshiro128+, so the same seed yields the same numbers in Node and in the
 * browser (integer arithmetic and exactly rounded double products only).
 */
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { finite } from "./validate.ts";

export type { RandomGenerator };

const TWO_32 = 4294967296;
const INV_TWO_32 = 1 / TWO_32;

/** A seed: any finite integer (errors name `fn`, the public function the caller used). */
export function checkSeed(fn: string, seed: unknown): number {
  const v = finite(fn, "seed", seed);
  if (!Number.isInteger(v)) throw new RangeError(`${fn}(): seed must be an integer, got ${v}`);
  return v;
}

/**
 * A fresh generator for `seed` (any integer; it is taken modulo 2³²). pure-rand seeds
 * xoroshiro128+ by writing the seed straight into a mostly-constant state, so the first
 * outputs of every seed are near 2³² − 1 (0.9999, 0.996, …); one `jump()` (2⁶⁴ steps,
 * 128 state updates) moves to a well-mixed state before any draw is used.
 */
export function seededRng(fn: string, seed: number): RandomGenerator {
  const rng = xoroshiro128plus(checkSeed(fn, seed));
  rng.jump();
  return rng;
}

/** The rejection threshold 2³² mod n of {@link drawIndex} (hoisted out of hot loops). */
export function rejectBelow(n: number): number {
  return TWO_32 % n;
}

/**
 * A uniform integer in 0…n−1 (n ≤ 2³²) from 32-bit outputs, exactly unbiased:
 * Lemire's multiply-and-reject, done in doubles (x·n < 2⁵³ is exact). It avoids the
 * slow floating-point `%` of the textbook method, which matters in the bootstrap's
 * n·R draws. `threshold` = rejectBelow(n).
 */
export function drawIndex(rng: RandomGenerator, n: number, threshold: number): number {
  let m = (rng.next() >>> 0) * n;
  let idx = Math.floor(m * INV_TWO_32);
  while (m - idx * TWO_32 < threshold) {
    m = (rng.next() >>> 0) * n;
    idx = Math.floor(m * INV_TWO_32);
  }
  return idx;
}
