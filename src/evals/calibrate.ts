import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { seededRng } from "../stats/rng.ts";
import { pairedTest, sharedCases, toleranceVerdict } from "./compare.ts";
import { comparability } from "./fingerprint.ts";
import { metricValue, type RunView } from "./run-view.ts";
import { hashSeed } from "./run.ts";
import { quantile } from "./summary.ts";
import type { SyntheticCase } from "./synthetic.ts";
import { PASS_METRIC } from "./types.ts";

export interface CalibrateOptions {
  /** The tolerance wanted (the gate's): the recommendation is the fewest repeats that reach it. */
  readonly target?: number;
  readonly alpha?: number;
  /** Repeats to tabulate (the runs' own repeats are always added). */
  readonly repeats?: readonly number[];
  /** Simulated A/A pairs per row. */
  readonly simulations?: number;
  readonly bootstrap?: number;
}

export interface CalibrationRow {
  readonly repeats: number;
  /** The smallest tolerance (to a tenth of a point) at which 95% of A/A comparisons pass. */
  readonly tolerance: number;
  /** Share of A/A comparisons that pass at the target tolerance. */
  readonly aaPassAtTarget?: number;
}

export interface Calibration {
  readonly eval: string;
  readonly runs: readonly string[];
  readonly codeVersions: readonly string[];
  /** Shared unchanged cases the calibration stands on. */
  readonly cases: number;
  /** The runs' configured repeats. */
  readonly repeats: number;
  readonly alpha: number;
  readonly simulations: number;
  /** Share of cases whose trials disagreed across the runs. */
  readonly flakyShare: number;
  readonly flakyCases: readonly string[];
  /** P(two trials of a case disagree), averaged over cases (unbiased per case). */
  readonly flipRate: number;
  readonly rows: readonly CalibrationRow[];
  /** Each pair of the given runs compared as the gate would (pass metric). */
  readonly observed: readonly { a: string; b: string; diff: number; lo: number; hi: number; p: number }[];
  readonly target?: number;
  /** Fewest repeats whose A/A tolerance reaches the target; null when none does. */
  readonly recommendedRepeats: number | null;
  readonly suggestedTolerance: number | null;
  readonly warnings: string[];
  readonly notes: string[];
}

const AA_PASS = 0.95;

/**
 * How much do an eval's numbers move on their own, and what tolerance can its
 * gate use? From ≥ 2 runs of the same eval and code (an A/A test): each case
 * passes with its own probability p_i, estimated from all its trials; pairs of
 * synthetic A/A runs drawn from those p_i go through the gate's own comparison
 * (`pairedTest`: McNemar/Newcombe or the (cluster) bootstrap), and a run passes
 * at tolerance t exactly when its interval's lower end is ≥ −t. The tolerance
 * 95% of A/A pairs pass at is tabulated for 1, 2, 3, 5 repeats (and the
 * configured number); it includes case-sampling uncertainty, not only flakes.
 *
 * @example calibrate([run1, run2, run3], { target: 0.03 })
 *   // { rows: [{ repeats: 1, tolerance: 0.071 }, …], recommendedRepeats: 3, flakyShare: 0.12, flipRate: 0.05, … }
 */
export function calibrate(runs: readonly RunView[], options: CalibrateOptions = {}): Calibration {
  if (runs.length < 2)
    throw new Error(
      `calibrate needs at least two runs of the same eval and code (three is usual); got ${runs.length}: one run shows no run-to-run noise`,
    );
  const evals = [...new Set(runs.map((r) => r.evalKey))];
  if (evals.length > 1)
    throw new Error(`calibrate compares runs of one eval, not of [${evals.map((e) => `'${e}'`).join(", ")}]`);
  const ids = [...new Set(runs.map((r) => r.id))];
  if (ids.length !== runs.length) throw new Error("calibrate: the same run is given twice; give distinct runs");
  const alpha = options.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`calibrate: alpha ${alpha} is not in (0, 1)`);
  const target = options.target;
  if (target !== undefined && !(target > 0 && target < 1))
    throw new RangeError(`calibrate: target ${target} is not in (0, 1); e.g. 0.03 for three points`);
  const simulations = options.simulations ?? 200;
  const bootstrap = options.bootstrap ?? 2000;

  const warnings: string[] = [];
  const codeVersions = [...new Set(runs.map((r) => r.fingerprint.codeVersion ?? "unknown"))].sort();
  if (codeVersions.length > 1)
    warnings.push(
      `the runs are of different code versions [${codeVersions.join(", ")}]: what moves between them is not only noise — calibrate runs of one version`,
    );
  for (const r of runs.slice(1)) {
    for (const w of comparability(runs[0]!.fingerprint, r.fingerprint))
      warnings.push(`${runs[0]!.id} vs ${r.id}: ${w}`);
    if (r.fingerprint.model.key !== runs[0]!.fingerprint.model.key)
      warnings.push(`${runs[0]!.id} vs ${r.id}: different models — an A/A test runs one model`);
  }

  // The cases every run holds unchanged, with a pass verdict in each.
  let shared = sharedCases(runs[0]!, runs[1]!).ids;
  for (const r of runs.slice(2)) {
    const keep = new Set(sharedCases(runs[0]!, r).ids);
    shared = shared.filter((id) => keep.has(id));
  }
  const passes: number[] = [];
  const trials: number[] = [];
  const caseIds: string[] = [];
  const clusters: string[] = [];
  for (const id of shared) {
    let p = 0;
    let t = 0;
    for (const r of runs)
      for (const trial of r.cases.get(id)!.trials) {
        if (trial.errored) continue;
        t++;
        if (trial.passed) p++;
      }
    if (t === 0) continue;
    caseIds.push(id);
    passes.push(p);
    trials.push(t);
    const c = runs[0]!.cases.get(id)!;
    clusters.push(c.cluster ?? `case:${id}`);
  }
  const n = caseIds.length;
  if (n === 0) throw new Error(`calibrate: runs [${ids.join(", ")}] share no unchanged case with a verdict`);
  const clustered = runs.some((r) => r.clusterField !== undefined);
  const prob = passes.map((p, i) => p / trials[i]!);

  const configured = runs[0]!.repeats;
  const tabulated = [...new Set([...(options.repeats ?? [1, 2, 3, 5]), configured])].sort((x, y) => x - y);
  const rows: CalibrationRow[] = [];
  for (const r of tabulated) {
    if (!Number.isInteger(r) || r < 1) throw new RangeError(`calibrate: repeats ${r} must be a positive integer`);
    const rng = seededRng("calibrate", hashSeed("calibrate", ...[...ids].sort(), r));
    const draw = () =>
      prob.map((p) => {
        let k = 0;
        for (let j = 0; j < r; j++) if (uniformFloat64(rng) < p) k++;
        return k / r;
      });
    const lows: number[] = [];
    for (let s = 0; s < simulations; s++)
      lows.push(pairedTest(draw(), draw(), clustered ? clusters : undefined, 1 - alpha, { bootstrap }).lo);
    const need = lows.map((lo) => -lo).sort((x, y) => x - y);
    rows.push({
      repeats: r,
      tolerance: Math.max(0, Math.ceil(quantile(need, AA_PASS) * 1000 - 1e-9) / 1000),
      ...(target !== undefined ? { aaPassAtTarget: lows.filter((lo) => lo >= -target).length / lows.length } : {}),
    });
  }

  const observed: Calibration["observed"][number][] = [];
  for (let i = 0; i < runs.length; i++)
    for (let j = i + 1; j < runs.length; j++) {
      const a: number[] = [];
      const b: number[] = [];
      const cl: string[] = [];
      caseIds.forEach((id, k) => {
        const va = metricValue(runs[i]!.cases.get(id)!, PASS_METRIC);
        const vb = metricValue(runs[j]!.cases.get(id)!, PASS_METRIC);
        if (va === undefined || vb === undefined) return;
        a.push(va);
        b.push(vb);
        cl.push(clusters[k]!);
      });
      if (!a.length) continue;
      const c = pairedTest(a, b, clustered ? cl : undefined, 1 - alpha, { bootstrap });
      observed.push({ a: runs[i]!.id, b: runs[j]!.id, diff: c.diff, lo: c.lo, hi: c.hi, p: c.p });
    }

  const flaky = caseIds.filter((_, i) => passes[i]! > 0 && passes[i]! < trials[i]!);
  const flip =
    trials.reduce((sum, t, i) => sum + (t > 1 ? (2 * passes[i]! * (t - passes[i]!)) / (t * (t - 1)) : 0), 0) / n;
  const notes: string[] = [];
  let recommended: number | null = configured;
  if (target !== undefined) {
    const reach = rows.filter((row) => row.tolerance <= target).map((row) => row.repeats);
    recommended = reach.length ? Math.min(...reach) : null;
    if (recommended === null) {
      const best = rows.reduce((x, y) => (y.tolerance < x.tolerance ? y : x));
      notes.push(
        `too noisy to gate at tolerance ${(target * 100).toFixed(1)} pts with ${n} cases: the best of the table (${best.repeats} repeat(s)) needs ${(best.tolerance * 100).toFixed(1)} pts; more cases narrow the interval (evalrx power says how many), so does a larger tolerance`,
      );
    } else {
      const at = rows.find((row) => row.repeats === configured)!;
      if (at.tolerance > target)
        notes.push(
          `at the configured ${configured} repeat(s) A/A runs pass at tolerance ${(target * 100).toFixed(1)} pts only ${((at.aaPassAtTarget ?? 0) * 100).toFixed(0)}% of the time; ${recommended} repeats reach it`,
        );
    }
  }
  if (flaky.length)
    notes.push(
      `${flaky.length} of ${n} cases flipped across the runs; a case that never flipped in ${Math.min(...trials)} trials is simulated as deterministic, so more runs measure rare flakes better`,
    );
  return {
    eval: evals[0]!,
    runs: runs.map((r) => r.id),
    codeVersions,
    cases: n,
    repeats: configured,
    alpha,
    simulations,
    flakyShare: flaky.length / n,
    flakyCases: flaky.slice(0, 50),
    flipRate: flip,
    rows,
    observed,
    ...(target !== undefined ? { target } : {}),
    recommendedRepeats: recommended,
    suggestedTolerance: recommended === null ? null : rows.find((row) => row.repeats === recommended)!.tolerance,
    warnings,
    notes,
  };
}

/**
 * On what share of their shared unchanged cases do two runs disagree? The mean
 * |s_B − s_A| of each case's pass share — for one trial per case, exactly
 * McNemar's discordance (b + c) / n. The input `power` needs.
 *
 * @example discordance(main, branch) // { discordance: 0.14, n: 600 }
 */
export function discordance(a: RunView, b: RunView): { discordance: number; n: number } {
  const { ids } = sharedCases(a, b);
  let sum = 0;
  let n = 0;
  for (const id of ids) {
    const va = metricValue(a.cases.get(id)!, PASS_METRIC);
    const vb = metricValue(b.cases.get(id)!, PASS_METRIC);
    if (va === undefined || vb === undefined) continue;
    sum += Math.abs(vb - va);
    n++;
  }
  if (n === 0) throw new Error(`runs '${a.id}' and '${b.id}' share no unchanged case with a verdict in both`);
  return { discordance: sum / n, n };
}

/** Candidate sample sizes `power` searches over (cases), refined by bisection between the two that bracket the target. */
const N_GRID = [20, 30, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 5000, 10000, 20000];
/** Repeats `power` tries when it says how many reach the target. */
const REPEATS_GRID = [1, 2, 3, 5, 8];

export interface PowerInput {
  /** The drop in pass rate to detect (e.g. 0.05 for five points); without it, the smallest drop `n` cases detect. */
  readonly drop?: number;
  /** Shared unchanged cases the gate compares (default: searched, the fewest that reach `power`). */
  readonly n?: number;
  /** The gate's tolerance: it fails a run when the interval lies entirely below −tolerance (default 0.03). */
  readonly tolerance?: number;
  /** Repeats (trials) per case in each run (default 1). */
  readonly repeats?: number;
  /** The baseline's pass rate (default 0.8). */
  readonly passRate?: number;
  /** P(two trials of one case disagree) — `calibrate`'s flipRate (default 0: every case deterministic). */
  readonly flipRate?: number;
  /** The share of cases two runs of the same code disagree on; read as the flip rate when that is not given. */
  readonly discordance?: number;
  /** Cases per cluster (default 1: independent cases), e.g. questions per image. */
  readonly clusterSize?: number;
  /** Within-cluster correlation of which cases pass and which break (default 0.3 with clusters, else 0). */
  readonly icc?: number;
  /** Measured per-case pass rates of the baseline (replace passRate and flipRate), e.g. from `runView` trials. */
  readonly caseRates?: readonly number[];
  /** The clusters of `caseRates`' cases. */
  readonly clusters?: readonly string[];
  /** The gate's α: its interval is at 1 − α (default 0.05). */
  readonly alpha?: number;
  /** The power wanted (default 0.8). */
  readonly power?: number;
  /** Simulated gates per power estimate (default 400). */
  readonly simulations?: number;
  readonly seed?: number;
}

export interface PowerResult {
  /** P(the gate fails the candidate) at `n` cases and `drop`, by simulation. */
  readonly power: number;
  /** Monte Carlo standard error of `power`. */
  readonly mcError: number;
  readonly n: number;
  readonly drop: number;
  readonly tolerance: number;
  readonly repeats: number;
  readonly alpha: number;
  /** The power asked for. */
  readonly target: number;
  /** Fewest cases whose simulated gate reaches `target` (null: not within 20,000). */
  readonly casesForTarget: number | null;
  /** Fewest repeats (of 1, 2, 3, 5, 8) that reach `target` at `n` cases (null: none does). */
  readonly repeatsForTarget: number | null;
  /** The test the gate runs on such runs (comparePaired's method). */
  readonly method: string;
  readonly simulations: number;
  /** Power at the sample sizes tried, for a curve. */
  readonly curve: readonly { readonly n: number; readonly power: number }[];
  readonly summary: string;
  readonly notes: string[];
}

/** The pair-of-runs model `power` simulates, resolved from its input. */
interface PowerModel {
  readonly n: number;
  readonly drop: number;
  readonly tolerance: number;
  readonly repeats: number;
  readonly alpha: number;
  readonly passRate: number;
  /** Share of flaky cases (pass probability ½); the others pass always or never. */
  readonly flaky: number;
  readonly clusterSize: number;
  readonly icc: number;
  readonly caseRates?: readonly number[];
  readonly clusters?: readonly string[];
}

/**
 * One simulated pair of runs (baseline, candidate) under `model`, trial by trial. Each case is
 * flaky (passes with probability ½) or deterministic (always / never); the candidate breaks
 * each baseline case with probability drop/passRate, so its pass rate is passRate − drop;
 * within a cluster both draws are shared with probability √icc, so cases of one cluster pass
 * and break together. `visit` gets each case's cluster and its trials in both runs.
 */
function simulateTrials(
  model: PowerModel,
  u: () => number,
  visit: (i: number, cluster: string | undefined, a: Uint8Array, b: Uint8Array) => void,
): void {
  const rates = model.caseRates;
  const n = rates ? rates.length : model.n;
  const size = Math.max(1, model.clusterSize);
  const share = Math.sqrt(Math.max(0, Math.min(1, model.icc)));
  const base = rates ? rates.reduce((x, y) => x + y, 0) / Math.max(1, n) : model.passRate;
  const breakP = base > 0 ? Math.min(1, model.drop / base) : 0;
  const stable = model.flaky < 1 ? (model.passRate - 0.5 * model.flaky) / (1 - model.flaky) : 0;
  const clustered = rates ? model.clusters !== undefined : size > 1;
  const clusterOf = (i: number) => (rates ? (model.clusters?.[i] ?? `c${i}`) : `c${Math.floor(i / size)}`);
  const ta = new Uint8Array(model.repeats);
  const tb = new Uint8Array(model.repeats);
  let sharedType = 0;
  let sharedBreak = 0;
  let current = "";
  for (let i = 0; i < n; i++) {
    const g = clusterOf(i);
    if (g !== current) {
      current = g;
      sharedType = u();
      sharedBreak = u();
    }
    let p: number;
    if (rates) p = rates[i]!;
    else {
      const t = share > 0 && u() < share ? sharedType : u();
      p = t < model.flaky ? 0.5 : (t - model.flaky) / Math.max(1e-12, 1 - model.flaky) < stable ? 1 : 0;
    }
    const broken = (share > 0 && u() < share ? sharedBreak : u()) < breakP;
    const q = broken ? 0 : p;
    for (let r = 0; r < model.repeats; r++) {
      ta[r] = u() < p ? 1 : 0;
      tb[r] = u() < q ? 1 : 0;
    }
    visit(i, clustered ? g : undefined, ta, tb);
  }
}

/** Per case the share of passing trials in each run (what the gate compares), and the clusters. */
function simulateRunPair(
  model: PowerModel,
  u: () => number,
): { a: number[]; b: number[]; clusters: string[] | undefined } {
  const n = model.caseRates ? model.caseRates.length : model.n;
  const a = new Array<number>(n);
  const b = new Array<number>(n);
  let clusters: string[] | undefined;
  simulateTrials(model, u, (i, cluster, ta, tb) => {
    let ka = 0;
    let kb = 0;
    for (let r = 0; r < ta.length; r++) {
      ka += ta[r]!;
      kb += tb[r]!;
    }
    a[i] = ka / ta.length;
    b[i] = kb / tb.length;
    if (cluster !== undefined) (clusters ??= new Array<string>(n))[i] = cluster;
  });
  return { a, b, clusters };
}

/**
 * Two synthetic runs drawn from the model `power` simulates (for checking its predictions
 * against real `gate` calls, in tests and `bench:validity`): the cases of the baseline and of
 * the candidate, trial by trial, with their clusters.
 *
 * @example simulatedRuns({ n: 200, drop: 0.05, repeats: 3 }, 1).candidate[0] // { id: "c0", pass: [1, 1, 1] }
 */
export function simulatedRuns(
  input: PowerInput & { readonly n: number; readonly drop: number },
  seed: number,
): { baseline: SyntheticCase[]; candidate: SyntheticCase[] } {
  const model = resolveModel(input, input.n, input.drop);
  const rng = seededRng("simulatedRuns", seed);
  const baseline: SyntheticCase[] = [];
  const candidate: SyntheticCase[] = [];
  simulateTrials(
    model,
    () => uniformFloat64(rng),
    (i, cluster, ta, tb) => {
      const c = cluster !== undefined ? { cluster } : {};
      baseline.push({ id: `c${i}`, pass: Array.from(ta) as (0 | 1)[], ...c });
      candidate.push({ id: `c${i}`, pass: Array.from(tb) as (0 | 1)[], ...c });
    },
  );
  return { baseline, candidate };
}

/** The simulated model for `input` at n cases and a given drop (inputs already checked by `power`). */
function resolveModel(input: PowerInput, n: number, drop: number): PowerModel {
  const clusterSize = input.clusterSize ?? 1;
  return {
    n,
    drop,
    tolerance: input.tolerance ?? 0.03,
    repeats: input.repeats ?? 1,
    alpha: input.alpha ?? 0.05,
    passRate: input.caseRates
      ? input.caseRates.reduce((x, y) => x + y, 0) / input.caseRates.length
      : (input.passRate ?? 0.8),
    flaky: 2 * (input.flipRate ?? input.discordance ?? 0),
    clusterSize,
    icc: input.icc ?? (clusterSize > 1 || input.clusters ? 0.3 : 0),
    ...(input.caseRates ? { caseRates: input.caseRates } : {}),
    ...(input.clusters ? { clusters: input.clusters } : {}),
  };
}

/** The share of simulated gates that fail the candidate, and the test they ran. */
function simulatedPower(model: PowerModel, simulations: number, seed: number): { power: number; method: string } {
  const rng = seededRng("power", seed);
  const u = () => uniformFloat64(rng);
  let fails = 0;
  let method = "";
  for (let s = 0; s < simulations; s++) {
    const { a, b, clusters } = simulateRunPair(model, u);
    const t = pairedTest(a, b, clusters, 1 - model.alpha, { bootstrap: 500, seed: s });
    method = t.method;
    if (toleranceVerdict(t.lo, t.hi, model.tolerance) === "fail") fails++;
  }
  return { power: fails / simulations, method };
}

/**
 * How likely is the gate to fail a candidate that really dropped, and how many cases (or
 * repeats) does it take? By simulation of the gate's own rule: pairs of runs are drawn (see
 * `simulateRunPair`: flaky and deterministic cases, repeats, clusters), each pair goes through
 * the comparison the gate runs (`pairedTest` at 1 − α: McNemar/Newcombe, the adjusted t, or
 * the cluster-robust t), and the candidate counts as failed when the interval lies entirely
 * below −tolerance — exactly `gate`'s verdict. Power is the share failed, with its Monte Carlo
 * error; the fewest cases reaching `power` are found on a grid refined by bisection (the same
 * seed at every n, so the curve is smooth), and the fewest repeats at `n` cases. A drop no
 * larger than the tolerance is never failed on purpose: power stays near 0 there.
 *
 * @example power({ drop: 0.08, tolerance: 0.03, n: 400 })
 *   // { power: 0.63, mcError: 0.024, casesForTarget: 520, repeatsForTarget: null, method: "mcnemar-newcombe", … }
 */
export function power(input: PowerInput): PowerResult {
  const alpha = input.alpha ?? 0.05;
  const target = input.power ?? 0.8;
  const tolerance = input.tolerance ?? 0.03;
  const repeats = input.repeats ?? 1;
  const simulations = input.simulations ?? 400;
  const seed = input.seed ?? 1;
  const passRate = input.passRate ?? 0.8;
  const flipRate = input.flipRate ?? input.discordance ?? 0;
  const clusterSize = input.clusterSize ?? 1;
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new RangeError(`power: ${what}`);
  };
  check(alpha > 0 && alpha < 1, `alpha ${alpha} is not in (0, 1); e.g. 0.05`);
  check(target > 0 && target < 1, `power ${target} is not in (0, 1); e.g. 0.8`);
  check(tolerance >= 0 && tolerance < 1, `tolerance ${tolerance} is not in [0, 1); e.g. 0.03 for three points`);
  check(Number.isInteger(repeats) && repeats >= 1, `repeats ${repeats} must be a whole number ≥ 1`);
  check(Number.isInteger(simulations) && simulations >= 20, `simulations ${simulations} must be a whole number ≥ 20`);
  check(passRate > 0 && passRate <= 1, `passRate ${passRate} is not in (0, 1]; e.g. 0.8`);
  check(
    flipRate >= 0 && flipRate <= 0.5,
    `flipRate ${flipRate} is not in [0, 0.5] (two trials of one case disagree at most half the time)`,
  );
  check(Number.isInteger(clusterSize) && clusterSize >= 1, `clusterSize ${clusterSize} must be a whole number ≥ 1`);
  const flaky = 2 * flipRate;
  check(
    0.5 * flaky <= passRate + 1e-12 && passRate - 0.5 * flaky <= 1 - flaky + 1e-12,
    `flipRate ${flipRate} cannot go with passRate ${passRate}: flaky cases pass half the time, so the pass rate must lie in [${(0.5 * flaky).toFixed(3)}, ${(1 - 0.5 * flaky).toFixed(3)}]`,
  );
  const icc = input.icc ?? (clusterSize > 1 || input.clusters ? 0.3 : 0);
  check(icc >= 0 && icc <= 1, `icc ${icc} is not in [0, 1]`);
  if (input.caseRates) {
    check(input.caseRates.length > 0, "caseRates is empty");
    for (const [i, r] of input.caseRates.entries()) check(r >= 0 && r <= 1, `caseRates[${i}] = ${r} is not in [0, 1]`);
    if (input.clusters)
      check(
        input.clusters.length === input.caseRates.length,
        `${input.clusters.length} clusters for ${input.caseRates.length} caseRates`,
      );
  }
  const notes: string[] = [];
  const model = (n: number, drop: number, r = repeats): PowerModel => ({ ...resolveModel(input, n, drop), repeats: r });
  const fixedN = input.caseRates ? input.caseRates.length : input.n;
  if (fixedN !== undefined) check(Number.isInteger(fixedN) && fixedN >= 2, `n ${fixedN} must be a whole number ≥ 2`);
  const curve: { n: number; power: number }[] = [];
  const at = (n: number, drop: number, sims = simulations) => simulatedPower(model(n, drop), sims, seed);

  let drop = input.drop;
  if (drop === undefined) {
    check(fixedN !== undefined, "give drop (to get the cases needed) or n (to get the detectable drop)");
    // The smallest drop reaching the target at n cases: bisection on (tolerance, passRate].
    let lo = tolerance;
    let hi = model(fixedN!, 0).passRate;
    if (at(fixedN!, hi, 200).power < target) {
      notes.push(
        `even a drop of the whole pass rate is not failed with ${(target * 100).toFixed(0)}% power at n = ${fixedN}`,
      );
      drop = hi;
    } else {
      for (let k = 0; k < 12; k++) {
        const mid = (lo + hi) / 2;
        if (at(fixedN!, mid, 200).power >= target) hi = mid;
        else lo = mid;
      }
      drop = hi;
    }
  }
  check(drop > 0 && drop <= 1, `drop ${drop} is not in (0, 1]; e.g. 0.05 for five points`);
  if (drop <= tolerance)
    notes.push(
      `the drop (${(drop * 100).toFixed(1)} pts) is not above the tolerance (${(tolerance * 100).toFixed(1)} pts): the gate is built to pass such a run, so its power stays near 0`,
    );

  // Fewest cases reaching the target (searched with the same seed at every n).
  let casesForTarget: number | null = null;
  if (!input.caseRates) {
    const grid = N_GRID.map((n) => Math.max(2, Math.ceil(n / clusterSize) * clusterSize));
    let below = 0;
    for (const n of grid) {
      const pw = at(n, drop).power;
      curve.push({ n, power: pw });
      if (pw >= target) {
        casesForTarget = n;
        break;
      }
      below = n;
    }
    if (casesForTarget !== null && below > 0) {
      let lo = below;
      let hi = casesForTarget;
      while (hi - lo > Math.max(clusterSize, Math.ceil(hi * 0.02))) {
        const mid = Math.ceil((lo + hi) / 2 / clusterSize) * clusterSize;
        if (mid >= hi || mid <= lo) break;
        if (at(mid, drop).power >= target) hi = mid;
        else lo = mid;
      }
      casesForTarget = hi;
    }
  }
  const n = fixedN ?? casesForTarget ?? N_GRID[N_GRID.length - 1]!;
  const result = at(n, drop);
  let repeatsForTarget: number | null = null;
  for (const r of REPEATS_GRID) {
    if (simulatedPower(model(n, drop, r), Math.min(simulations, 200), seed).power >= target) {
      repeatsForTarget = r;
      break;
    }
  }
  const mcError = Math.sqrt((result.power * (1 - result.power)) / simulations);
  const pts = (x: number) => `${(x * 100).toFixed(1)}`;
  const summary =
    `the gate (tolerance ${pts(tolerance)} pts, ${repeats} repeat(s), α = ${alpha}, ${result.method}) fails a ${pts(drop)}-point drop ` +
    `with probability ${(result.power * 100).toFixed(1)}% ± ${(mcError * 100).toFixed(1)} at n = ${n} cases` +
    (casesForTarget !== null
      ? `; ${casesForTarget} cases reach ${(target * 100).toFixed(0)}%`
      : input.caseRates
        ? ""
        : `; no n up to ${N_GRID[N_GRID.length - 1]} reaches ${(target * 100).toFixed(0)}%`) +
    (repeatsForTarget !== null ? `; at n = ${n}, ${repeatsForTarget} repeat(s) reach it` : "") +
    ` (by simulation of ${simulations} gates)`;
  return {
    power: result.power,
    mcError,
    n,
    drop,
    tolerance,
    repeats,
    alpha,
    target,
    casesForTarget,
    repeatsForTarget,
    method: result.method,
    simulations,
    curve,
    summary,
    notes,
  };
}
