import { seededRng, type RandomGenerator } from "../../stats/rng.ts";

const INV_TWO_32 = 1 / 4294967296;

/** An edit family (macro choice) and its parameter regions (micro choices). */
export interface ProbeFamily {
  readonly name: string;
  readonly arms: readonly string[];
}

export interface ProbeSearchOptions<C> {
  readonly families: readonly ProbeFamily[];
  /**
   * A new candidate of `family`, in parameter region `arm`, drawn with `rng`;
   * undefined when none applies (e.g. no object to remove): no model call spent.
   */
  readonly generate: (family: string, arm: string, rng: Rng) => C | undefined;
  /** One model call: does the model fail this candidate? */
  readonly verify: (candidate: C) => Promise<boolean>;
  /** Model calls at most. */
  readonly budget: number;
  readonly seed: number;
  /** UCB1's exploration constant. Default √2. */
  readonly exploration?: number;
  /** Draws `generate` may make in a row that give nothing before an arm is set aside. Default 20. */
  readonly maxMisses?: number;
  /** Called after each model call (progress). */
  readonly onCall?: (calls: number, failures: number) => void;
  /** Stops the search between calls. */
  readonly signal?: AbortSignal;
}

/** Uniform draws for generators: `below(n)` an integer in 0…n−1, `unit()` in [0, 1). */
export interface Rng {
  readonly below: (n: number) => number;
  readonly unit: () => number;
}

export interface ArmStats {
  readonly family: string;
  readonly arm: string;
  readonly calls: number;
  readonly failures: number;
  /** Set aside: `generate` gave nothing `maxMisses` times in a row. */
  readonly exhausted: boolean;
}

export interface ProbeSearchResult<C> {
  readonly calls: number;
  readonly failures: number;
  /** The candidates the model failed, in the order found. */
  readonly found: readonly C[];
  readonly arms: readonly ArmStats[];
  /** Calls and failures per family. */
  readonly families: readonly { readonly family: string; readonly calls: number; readonly failures: number }[];
  readonly stopped: "budget" | "exhausted" | "aborted";
}

/**
 * Where do this model's failures hide? A two-level Monte Carlo tree search
 * over edits: the root chooses an edit family and the family a parameter
 * region, each by UCB1 on the failure rate seen so far (unvisited first), and
 * every leaf visit draws fresh parameters and spends one model call on them
 * (the rollout). Generator and verifier are injected, so the search knows no
 * model, image or text. Deterministic for a seed.
 *
 * @example
 * await probeSearch({ families, generate, verify, budget: 2000, seed: 1 }) // { calls: 2000, failures: 1311, found: [...], ... }
 */
export async function probeSearch<C>(options: ProbeSearchOptions<C>): Promise<ProbeSearchResult<C>> {
  const { families, budget } = options;
  if (!Number.isInteger(budget) || budget < 0)
    throw new RangeError(`probeSearch(): budget must be a whole number of model calls, got ${budget}`);
  if (families.length === 0 || families.some((f) => f.arms.length === 0))
    throw new RangeError("probeSearch(): needs at least one family, each with at least one arm");
  const c = options.exploration ?? Math.SQRT2;
  const maxMisses = options.maxMisses ?? 20;
  const generator = seededRng("probeSearch", options.seed);
  const rng = rngOf(generator);
  const arms = families.map((f) =>
    f.arms.map((arm) => ({ family: f.name, arm, calls: 0, failures: 0, misses: 0, exhausted: false })),
  );
  const found: C[] = [];
  let calls = 0;
  let failures = 0;
  let stopped: ProbeSearchResult<C>["stopped"] = "budget";
  while (calls < budget) {
    if (options.signal?.aborted) {
      stopped = "aborted";
      break;
    }
    const open = arms.map((family) => family.filter((a) => !a.exhausted));
    const familyIndex = pickUcb(
      open.map((family) =>
        family.reduce((s, a) => ({ calls: s.calls + a.calls, failures: s.failures + a.failures }), {
          calls: 0,
          failures: 0,
        }),
      ),
      open.map((family) => family.length > 0),
      c,
      rng,
    );
    if (familyIndex === undefined) {
      stopped = "exhausted";
      break;
    }
    const family = open[familyIndex]!;
    const arm =
      family[
        pickUcb(
          family,
          family.map(() => true),
          c,
          rng,
        )!
      ]!;
    const candidate = options.generate(arm.family, arm.arm, rng);
    if (candidate === undefined) {
      if (++arm.misses >= maxMisses) arm.exhausted = true;
      continue;
    }
    arm.misses = 0;
    const failed = await options.verify(candidate);
    calls++;
    arm.calls++;
    if (failed) {
      failures++;
      arm.failures++;
      found.push(candidate);
    }
    options.onCall?.(calls, failures);
  }
  const flat = arms.flat();
  return {
    calls,
    failures,
    found,
    arms: flat.map(({ family, arm, calls, failures, exhausted }) => ({ family, arm, calls, failures, exhausted })),
    families: families.map((f) => {
      const mine = flat.filter((a) => a.family === f.name);
      return {
        family: f.name,
        calls: mine.reduce((s, a) => s + a.calls, 0),
        failures: mine.reduce((s, a) => s + a.failures, 0),
      };
    }),
    stopped,
  };
}

/** UCB1 over the allowed nodes: an unvisited one first (ties at random), else the largest rate + c·√(ln N / n). */
function pickUcb(
  nodes: readonly { calls: number; failures: number }[],
  allowed: readonly boolean[],
  c: number,
  rng: Rng,
): number | undefined {
  const candidates = nodes.map((_, i) => i).filter((i) => allowed[i]);
  if (candidates.length === 0) return undefined;
  const unvisited = candidates.filter((i) => nodes[i]!.calls === 0);
  if (unvisited.length > 0) return unvisited[rng.below(unvisited.length)];
  const total = candidates.reduce((s, i) => s + nodes[i]!.calls, 0);
  let best = candidates[0]!;
  let bestScore = -Infinity;
  for (const i of candidates) {
    const { calls, failures } = nodes[i]!;
    const score = failures / calls + c * Math.sqrt(Math.log(total) / calls);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

function rngOf(generator: RandomGenerator): Rng {
  const unit = () => (generator.next() >>> 0) * INV_TWO_32;
  return { unit, below: (n: number) => Math.min(n - 1, Math.floor(unit() * n)) };
}
