import type { Rng } from "./probe-search.ts";

/** The probe tree's third level: which seed case to edit next, by how often its variants failed. */
export interface SeedBandit {
  /** The seeds in the order to try them: unvisited first, then by UCB1 (ties broken by `rng`). */
  readonly order: (rng: Rng) => number[];
  /** One model call on a variant of seed `i`. */
  readonly record: (i: number, failed: boolean) => void;
}

/**
 * Which seed's variants should the search spend its next call on? UCB1 over
 * the seeds, rate of failing variants + c·√(ln N / n), unvisited seeds first:
 * a seed whose edits keep failing is edited again, one that never fails is
 * tried now and then. Shared by the scene, photo and text probe searches.
 *
 * @example
 * const bandit = seedBandit(40, 0.5);
 * bandit.record(3, true);
 * bandit.order(rng)[39] // 3: the only visited seed comes after every unvisited one
 */
export function seedBandit(count: number, exploration: number): SeedBandit {
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`seedBandit(): count must be a whole number of seeds, at least 1, got ${count}`);
  const stats = Array.from({ length: count }, () => ({ calls: 0, failures: 0 }));
  let visits = 0;
  return {
    order: (rng) => {
      const score = stats.map(({ calls, failures }) =>
        calls === 0 ? Infinity : failures / calls + exploration * Math.sqrt(Math.log(Math.max(1, visits)) / calls),
      );
      const jitter = stats.map(() => rng.unit());
      return stats.map((_, i) => i).sort((a, b) => score[b]! - score[a]! || jitter[a]! - jitter[b]!);
    },
    record: (i, failed) => {
      const s = stats[i];
      if (!s) throw new RangeError(`seedBandit(): no seed ${i}; there are ${count}`);
      s.calls++;
      visits++;
      if (failed) s.failures++;
    },
  };
}
