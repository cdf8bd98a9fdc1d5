import { normalQuantile } from "./distributions.ts";
import { openUnit, options, positiveInt } from "./validate.ts";

export interface SampleSizeInput {
  /** Expected fraction of cases on which the two runs disagree, p_d = P(A≠B). */
  discordance: number;
  /** The drop in pass rate to detect, δ (0 < δ ≤ discordance). */
  drop: number;
  /** Two-sided significance level (default 0.05). */
  alpha?: number;
  /** Power to reach (default 0.8). */
  power?: number;
}

export interface DetectableDropInput {
  /** Number of paired cases. */
  n: number;
  discordance: number;
  alpha?: number;
  power?: number;
}

function levels(fn: string, alpha: unknown, power: unknown): { za: number; zb: number } {
  const a = openUnit(fn, "alpha", alpha ?? 0.05);
  const p = openUnit(fn, "power", power ?? 0.8);
  if (p < 0.5) throw new RangeError(`${fn}(): power must be at least 0.5, got ${p}`);
  return { za: -normalQuantile(a / 2), zb: normalQuantile(p) };
}

/** Connor's n before rounding up. */
function connorN(pd: number, delta: number, za: number, zb: number): number {
  const root = (za * Math.sqrt(pd) + zb * Math.sqrt(pd - delta * delta)) / delta;
  return root * root;
}

/**
 * How many paired cases does a McNemar comparison need to detect a given drop in pass
 * rate? Connor (1987): n = ((z_{1−α/2} √p_d + z_{1−β} √(p_d − δ²)) / δ)², rounded up,
 * where p_d is the discordance and δ the drop.
 *
 * @example pairedSampleSize({ discordance: 0.2, drop: 0.1 }) // 155
 */
export function pairedSampleSize(input: SampleSizeInput): number {
  const fn = "pairedSampleSize";
  const o = options<SampleSizeInput>(fn, input);
  const pd = openUnit(fn, "discordance", o.discordance);
  const delta = openUnit(fn, "drop", o.drop);
  if (delta > pd) {
    throw new RangeError(
      `${fn}(): drop ${delta} exceeds discordance ${pd}; a drop cannot exceed the share of disagreeing cases`,
    );
  }
  const { za, zb } = levels(fn, o.alpha, o.power);
  return Math.ceil(connorN(pd, delta, za, zb));
}

/**
 * What is the smallest drop in pass rate that n paired cases detect with the given power?
 * The inverse of {@link pairedSampleSize} (Connor 1987), solved in closed form:
 * δ = √p_d (√n z_{1−α/2} + z_{1−β} √(n + z²_{1−β} − z²_{1−α/2})) / (n + z²_{1−β}).
 * Throws when even a drop equal to the whole discordance is out of reach.
 *
 * @example detectableDrop({ n: 155, discordance: 0.2 }) // 0.09987
 */
export function detectableDrop(input: DetectableDropInput): number {
  const fn = "detectableDrop";
  const o = options<DetectableDropInput>(fn, input);
  const n = positiveInt(fn, "n", o.n);
  const pd = openUnit(fn, "discordance", o.discordance);
  const { za, zb } = levels(fn, o.alpha, o.power);
  // n(δ) falls as δ grows, so some δ ≤ p_d works iff n(p_d) ≤ n.
  if (!(connorN(pd, pd, za, zb) <= n)) {
    throw new RangeError(
      `${fn}(): with n = ${n} and discordance ${pd}, no drop up to ${pd} reaches the requested power; use more cases`,
    );
  }
  // Squaring √n·δ − z_α√p_d = z_β√(p_d − δ²) gives a quadratic; its smaller root always makes the
  // left side negative (spurious), so the larger one is the answer.
  const delta = (Math.sqrt(pd) * (Math.sqrt(n) * za + zb * Math.sqrt(n + zb * zb - za * za))) / (n + zb * zb);
  return delta;
}
