import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { detectableDrop, pairedSampleSize } from "../stats/index.ts";
import { seededRng } from "../stats/rng.ts";
import { pairedTest, sharedCases } from "./compare.ts";
import { comparability } from "./fingerprint.ts";
import { metricValue, type RunView } from "./run-view.ts";
import { hashSeed } from "./run.ts";
import { quantile } from "./summary.ts";
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

export interface PowerInput {
  /** Share of cases on which two runs disagree (see `discordance`). */
  readonly discordance: number;
  /** The drop to detect; give it to get the cases needed. */
  readonly drop?: number;
  /** The cases available; give it (without `drop`) to get the smallest detectable drop. */
  readonly n?: number;
  readonly alpha?: number;
  readonly power?: number;
}

export interface PowerResult {
  readonly discordance: number;
  readonly alpha: number;
  readonly power: number;
  /** Paired cases needed to detect `drop` (Connor 1987). */
  readonly n: number;
  readonly drop: number;
  readonly summary: string;
}

/**
 * How many paired cases does a drop need, or what drop can n cases see?
 * McNemar's sample size (Connor 1987) from the discordance two runs show.
 *
 * @example power({ discordance: 0.1, drop: 0.05 }) // { n: 312, … }
 */
export function power(input: PowerInput): PowerResult {
  const alpha = input.alpha ?? 0.05;
  const pw = input.power ?? 0.8;
  const { discordance } = input;
  let n: number;
  let drop: number;
  if (input.drop !== undefined) {
    drop = input.drop;
    n = pairedSampleSize({ discordance, drop, alpha, power: pw });
  } else if (input.n !== undefined) {
    n = input.n;
    drop = detectableDrop({ n, discordance, alpha, power: pw });
  } else throw new Error("power: give drop (to get the cases needed) or n (to get the detectable drop)");
  return {
    discordance,
    alpha,
    power: pw,
    n,
    drop,
    summary: `${n} paired cases detect a ${(drop * 100).toFixed(1)}-point drop with ${(pw * 100).toFixed(0)}% power at α = ${alpha} when runs disagree on ${(discordance * 100).toFixed(1)}% of cases (McNemar, Connor 1987)`,
  };
}
