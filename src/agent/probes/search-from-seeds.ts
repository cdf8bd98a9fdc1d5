import { probeSearch, type ProbeFamily, type ProbeSearchResult, type Rng } from "./probe-search.ts";
import { seedBandit } from "./seed-bandit.ts";

/** Seeds drawn per candidate before an edit counts as inapplicable (no model call is spent on a miss). */
const SEED_ATTEMPTS = 40;

/** What every probe search over seed cases takes: the budget and the tree's settings. */
export interface SeedSearchSettings {
  /** Model calls in all, the seeds' own answers included. */
  readonly budget: number;
  readonly seed: number;
  readonly families?: readonly ProbeFamily[];
  /** UCB1's constant at every level (default 0.5). */
  readonly exploration?: number;
  readonly onCall?: (calls: number, failures: number) => void;
  readonly signal?: AbortSignal;
}

/** What it gives back: the seeds' own failure rate, the search, and the search's rate against the seeds'. */
export interface SeedSearchResult<C> {
  /** The seeds' own failure rate (one call each). */
  readonly seedCalls: number;
  readonly seedFailures: number;
  readonly search: ProbeSearchResult<C>;
  /** The search's failure rate over its calls, and its ratio to the seeds' rate. */
  readonly rate: number;
  readonly lift: number;
}

export interface SeedSearchOptions<C> extends SeedSearchSettings {
  readonly families: readonly ProbeFamily[];
  readonly seedCount: number;
  /** One model call on seed `i` as given: did the model fail it? */
  readonly askSeed: (i: number) => Promise<boolean>;
  /** A variant of seed `i` of `family` in region `arm`, or undefined when the edit does not apply to it. */
  readonly variant: (i: number, family: string, arm: string, rng: Rng) => C | undefined;
  /** One model call on a variant: the answer, and whether it fails the variant's expected answer. */
  readonly ask: (candidate: C) => Promise<{ readonly answer: string; readonly failed: boolean }>;
  /**
   * What a variant is, where two draws can make the same one (a rewording of the seed's own image, a text
   * prompt): one already tried is neither asked again nor kept twice, since the same input gets the same answer.
   * Undefined: every draw is new (an edit placed at random).
   */
  readonly identity?: (candidate: C) => string | undefined;
}

/**
 * How much more often does the model fail edited variants of these seeds
 * than the seeds themselves? Asks each seed once (within the budget), then
 * runs {@link probeSearch} with a third level below the family and region:
 * which seed to edit, by {@link seedBandit}. The kept candidates carry the
 * model's answer. Shared by the scene, photo and text searches, which supply
 * the edits and the verifier.
 *
 * @example
 * const r = await searchFromSeeds({ families, seedCount: 40, askSeed, variant, ask, budget: 400, seed: 1 });
 * r.lift // the variants' failure rate over the seeds'
 */
export async function searchFromSeeds<C extends { readonly answer: string }>(
  options: SeedSearchOptions<C>,
): Promise<SeedSearchResult<C>> {
  let seedCalls = 0;
  let seedFailures = 0;
  for (let i = 0; i < options.seedCount && seedCalls < options.budget; i++) {
    seedCalls++;
    if (await options.askSeed(i)) seedFailures++;
  }
  const exploration = options.exploration ?? 0.5;
  const bandit = seedBandit(options.seedCount, exploration);
  const parentOf = new WeakMap<C, number>();
  const answers = new WeakMap<C, string>();
  const tried = new Set<string>();
  const search = await probeSearch<C>({
    families: options.families,
    generate: (family, arm, rng) => {
      // Not every seed admits every edit (no partner to remove, nothing to swap): take the best few that do.
      for (const i of bandit.order(rng).slice(0, SEED_ATTEMPTS)) {
        const candidate = options.variant(i, family, arm, rng);
        if (candidate === undefined) continue;
        const id = options.identity?.(candidate);
        if (id !== undefined) {
          if (tried.has(id)) continue;
          tried.add(id);
        }
        parentOf.set(candidate, i);
        return candidate;
      }
      return undefined;
    },
    verify: async (c) => {
      const { answer, failed } = await options.ask(c);
      answers.set(c, answer);
      bandit.record(parentOf.get(c)!, failed);
      return failed;
    },
    budget: Math.max(0, options.budget - seedCalls),
    seed: options.seed,
    exploration,
    ...(options.onCall
      ? { onCall: (calls: number, failures: number) => options.onCall!(seedCalls + calls, failures) }
      : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const found = search.found.map((c) => ({ ...c, answer: answers.get(c) ?? "" }));
  const rate = search.calls > 0 ? search.failures / search.calls : 0;
  const seedRate = seedCalls > 0 ? seedFailures / seedCalls : 0;
  return {
    seedCalls,
    seedFailures,
    search: { ...search, found },
    rate,
    lift: seedRate > 0 ? rate / seedRate : Infinity,
  };
}
