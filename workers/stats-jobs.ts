/**
 * What the stats worker computes for the Compare page, as pure functions of
 * `RunView`s (so Node tests them, and the worker only adds the store and the
 * cache). Every verdict comes from the library the CLI calls: `gate` (with
 * `Gate({ baseline, tolerance, … })`, exactly as `evalrx gate <candidate>
 * --baseline <baseline> --tolerance T` builds it), `compare` when the runs
 * are of different evals (the gate refuses those), `summarize`, `calibrate`,
 * `discordance` and `power`. Results are plain data, and the per-case table
 * is columns of typed arrays, so 100k cases cross to the page cheaply.
 */
import {
  calibrate,
  compare,
  Gate,
  gate,
  metricValue,
  power,
  summarize,
  type Calibration,
  type GateResult,
  type MetricSummary,
  type MetricTest,
  type MetricVerdict,
  type PowerResult,
  type RunComparison,
  type RunView,
} from "../src/evals/index.ts";
import { describeTest } from "../src/evals/compare.ts";
import { eValueMcNemar } from "../src/stats/index.ts";

/** How a case fared, baseline → candidate (the order the case table sorts by). */
export const CASE_KINDS = [
  /** Passed every trial in the baseline, none in the candidate. */
  "regressed",
  /** Its pass share fell, but not from all to none (repeats). */
  "dropped",
  "fixed",
  /** Its pass share rose, but not from none to all. */
  "gained",
  /** Same verdicts, different answers. */
  "answer-differs",
  "both-fail",
  "both-pass",
  /** The same share between 0 and 1 in both (flaky in both). */
  "both-flaky",
  /** No counted trial in one run (errored or not run yet). */
  "no-verdict",
  /** Same id, different input or expected: left out of the comparison. */
  "changed-case",
  "only-baseline",
  "only-candidate",
] as const;
export type CaseKind = (typeof CASE_KINDS)[number];

/** Every case of the two runs, sorted regressions first, as columns. */
export interface CaseColumns {
  readonly ids: readonly string[];
  /** Index into `CASE_KINDS`. */
  readonly kind: Uint8Array;
  /** Pass share per case (NaN where the run has no verdict for it). */
  readonly baseline: Float32Array;
  readonly candidate: Float32Array;
  /** 1 where the verdicts or any repeat's answer differ. */
  readonly differs: Uint8Array;
}

/** The 2×2 of shared cases on the pass metric. */
export interface FlipTable {
  readonly bothPass: number;
  readonly regressed: number;
  readonly fixed: number;
  readonly bothFail: number;
  /** Cases left out of the four cells: a verdict in one run only, or (with repeats) a share between 0 and 1. */
  readonly other: number;
  /** How a case counts as passing. */
  readonly rule: string;
}

/** One metric's row in the page's table: the library's test plus what the page shows beside it. */
export interface MetricRow extends MetricTest {
  /** The test in words, as the CLI prints it (`describeTest`). */
  readonly line: string;
  /** The McNemar e-value (two-sided) where the test is McNemar's; undefined for the bootstrap. */
  readonly eValue?: number;
}

export interface RunSide {
  readonly id: string;
  readonly evalKey: string;
  readonly model: string;
  readonly status: string;
  readonly startedAt: string;
  readonly repeats: number;
  readonly cases: number;
  readonly metrics: readonly string[];
}

export interface CompareJobOptions {
  /** How large a drop matters (a share, e.g. 0.03). */
  readonly tolerance: number;
  readonly alpha?: number;
  /** Metrics that can fail the gate (default ["pass"], as the CLI). */
  readonly gated?: readonly string[];
}

export interface CompareJobResult {
  readonly baseline: RunSide;
  readonly candidate: RunSide;
  readonly tolerance: number;
  readonly alpha: number;
  readonly gated: readonly string[];
  /** The gate's result, as `evalrx gate --json` prints it; absent when the gate refused the pair. */
  readonly gate?: GateResult;
  /** Why the gate refused the pair (e.g. runs of two different evals); then `comparison` is `compare`'s. */
  readonly refused?: string;
  readonly comparison: RunComparison;
  readonly warnings: readonly string[];
  readonly metrics: readonly MetricRow[];
  /** Each run's own estimate per shared metric (`summarize`), for the side-by-side figure. */
  readonly estimates: readonly { readonly run: "baseline" | "candidate"; readonly summary: MetricSummary }[];
  readonly flips: FlipTable;
  readonly cases: CaseColumns;
  /** The CLI command that gives the same verdict on the two exported run files. */
  readonly command: string;
}

function side(view: RunView, model: string): RunSide {
  return {
    id: view.id,
    evalKey: view.evalKey,
    model,
    status: view.status,
    startedAt: view.startedAt,
    repeats: view.repeats,
    cases: view.cases.size,
    metrics: view.metrics,
  };
}

const modelOf = (view: RunView) => view.fingerprint.model.key;

/**
 * The CLI command that judges the same two runs the same way, on their exported files.
 *
 * @example gateCommand("cand", "base", 0.03, ["pass"], 0.05) // "evalrx gate cand.run.json --baseline base.run.json --tolerance 0.03"
 */
export function gateCommand(
  candidate: string,
  baseline: string,
  tolerance: number,
  gated: readonly string[],
  alpha: number,
): string {
  const file = (id: string) => `${id.replace(/[^\w.-]+/g, "_")}.run.json`;
  const metrics = gated.length === 1 && gated[0] === "pass" ? [] : gated.map((m) => `--metric ${m}`);
  return [
    "evalrx gate",
    file(candidate),
    "--baseline",
    file(baseline),
    "--tolerance",
    String(tolerance),
    ...metrics,
    ...(alpha !== 0.05 ? ["--alpha", String(alpha)] : []),
  ].join(" ");
}

/**
 * The 2×2 of shared cases on the pass metric: with one trial per case, the
 * four cells McNemar reads; with repeats, a case passes when every counted
 * trial passed and fails when none did (cases in between are `other`).
 *
 * @example flipTable([1, 1, 0, 0], [1, 0, 1, 0]) // { bothPass: 1, regressed: 1, fixed: 1, bothFail: 1, other: 0, … }
 */
export function flipTable(baseline: ArrayLike<number>, candidate: ArrayLike<number>): FlipTable {
  let bothPass = 0;
  let regressed = 0;
  let fixed = 0;
  let bothFail = 0;
  let other = 0;
  for (let i = 0; i < baseline.length; i++) {
    const a = baseline[i]!;
    const b = candidate[i]!;
    if (a === 1 && b === 1) bothPass++;
    else if (a === 1 && b === 0) regressed++;
    else if (a === 0 && b === 1) fixed++;
    else if (a === 0 && b === 0) bothFail++;
    else other++;
  }
  return {
    bothPass,
    regressed,
    fixed,
    bothFail,
    other,
    rule: "a case passes when every counted trial passed, fails when none did",
  };
}

const answersDiffer = (a: RunView, b: RunView, id: string) => {
  const ta = a.cases.get(id)!.trials;
  const tb = b.cases.get(id)!.trials;
  return ta.length !== tb.length || ta.some((t, i) => t.output !== tb[i]!.output);
};

/**
 * Every case of both runs, classified and sorted: regressions first (largest
 * drop in pass share first), then fixes, then shares that moved otherwise,
 * cases whose answers changed, both fail, both pass, no verdict, changed
 * cases (same id, different input), and cases only one run holds; ties by id.
 *
 * @example caseColumns(base, cand).ids[0] // the case that regressed most
 */
export function caseColumns(a: RunView, b: RunView): CaseColumns {
  interface Row {
    id: string;
    kind: number;
    /** Sort group: a drop sorts with the regressions, a gain with the fixes. */
    order: number;
    a: number;
    b: number;
    differs: number;
  }
  const rows: Row[] = [];
  const kind = (k: CaseKind) => CASE_KINDS.indexOf(k);
  const add = (id: string, k: CaseKind, va: number, vb: number, differs: boolean, order = kind(k)) =>
    rows.push({ id, kind: kind(k), order, a: va, b: vb, differs: differs ? 1 : 0 });
  for (const [id, ca] of a.cases) {
    const cb = b.cases.get(id);
    const va = metricValue(ca, "pass") ?? Number.NaN;
    if (!cb) {
      add(id, "only-baseline", va, Number.NaN, true);
      continue;
    }
    const vb = metricValue(cb, "pass") ?? Number.NaN;
    if (ca.hash !== cb.hash) {
      add(id, "changed-case", va, vb, true);
      continue;
    }
    const differ = answersDiffer(a, b, id) || va !== vb;
    if (Number.isNaN(va) || Number.isNaN(vb)) add(id, "no-verdict", va, vb, differ);
    else if (vb < va) add(id, va === 1 && vb === 0 ? "regressed" : "dropped", va, vb, true, kind("regressed"));
    else if (vb > va) add(id, va === 0 && vb === 1 ? "fixed" : "gained", va, vb, true, kind("fixed"));
    else if (differ) add(id, "answer-differs", va, vb, true);
    else add(id, va === 1 ? "both-pass" : va === 0 ? "both-fail" : "both-flaky", va, vb, false);
  }
  for (const [id, cb] of b.cases)
    if (!a.cases.has(id)) add(id, "only-candidate", Number.NaN, metricValue(cb, "pass") ?? Number.NaN, true);
  const move = (r: Row) => r.b - r.a;
  rows.sort((x, y) => {
    if (x.order !== y.order) return x.order - y.order;
    const bySize =
      x.order === kind("regressed") ? move(x) - move(y) : x.order === kind("fixed") ? move(y) - move(x) : 0;
    return bySize || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
  });
  return {
    ids: rows.map((r) => r.id),
    kind: Uint8Array.from(rows, (r) => r.kind),
    baseline: Float32Array.from(rows, (r) => r.a),
    candidate: Float32Array.from(rows, (r) => r.b),
    differs: Uint8Array.from(rows, (r) => r.differs),
  };
}

function metricRows(comparison: RunComparison): MetricRow[] {
  return comparison.tests.map((t) => ({
    ...t,
    line: describeTest(t),
    ...(t.method === "mcnemar-newcombe" && t.regressed !== undefined && t.fixed !== undefined
      ? { eValue: eValueMcNemar(t.regressed, t.fixed) }
      : {}),
  }));
}

/**
 * Did the candidate regress against the baseline, at this tolerance? The
 * gate's verdict exactly as `evalrx gate` gives it on the same two runs
 * (must-pass cases, error budget and the baseline comparison), each metric's
 * test with its e-value where McNemar's applies, each run's own estimates,
 * the 2×2 of flips and every case sorted by regressions. Runs of different
 * evals are compared (`compare`) but not gated: the gate refuses them and the
 * result says why.
 *
 * @example compareJob(base, cand, { tolerance: 0.03 }).gate?.verdict // "fail"
 */
export function compareJob(
  baseline: RunView,
  candidate: RunView,
  options: CompareJobOptions,
  models: { baseline?: string; candidate?: string } = {},
): CompareJobResult {
  const alpha = options.alpha ?? 0.05;
  const gated = options.gated?.length ? [...options.gated] : ["pass"];
  let result: GateResult | undefined;
  let refused: string | undefined;
  let comparison: RunComparison;
  let warnings: readonly string[];
  try {
    result = gate(
      candidate,
      Gate({
        baseline: baseline.id,
        tolerance: options.tolerance,
        alpha,
        ...(gated.length === 1 && gated[0] === "pass" ? {} : { metrics: gated }),
      }),
      baseline,
    );
    comparison = result.comparison!;
    warnings = result.warnings;
  } catch (error) {
    refused = error instanceof Error ? error.message : String(error);
    const compared = compare(baseline, candidate, { tolerance: options.tolerance, metrics: gated, alpha });
    comparison = compared.comparison;
    warnings = compared.warnings;
  }
  const shared = baseline.metrics.filter((m) => candidate.metrics.includes(m));
  const sa = summarize(baseline);
  const sb = summarize(candidate);
  const pick = (s: ReturnType<typeof summarize>, m: string) => (m === "pass" ? s.pass : (s.metrics[m] ?? null));
  const estimates: CompareJobResult["estimates"][number][] = [];
  for (const m of shared)
    for (const [run, s] of [
      ["baseline", sa],
      ["candidate", sb],
    ] as const) {
      const summary = pick(s, m);
      if (summary) estimates.push({ run, summary });
    }
  const a: number[] = [];
  const b: number[] = [];
  for (const [id, ca] of baseline.cases) {
    const cb = candidate.cases.get(id);
    if (!cb || cb.hash !== ca.hash) continue;
    const va = metricValue(ca, "pass");
    const vb = metricValue(cb, "pass");
    if (va === undefined || vb === undefined) continue;
    a.push(va);
    b.push(vb);
  }
  return {
    baseline: side(baseline, models.baseline ?? modelOf(baseline)),
    candidate: side(candidate, models.candidate ?? modelOf(candidate)),
    tolerance: options.tolerance,
    alpha,
    gated,
    ...(result ? { gate: result } : {}),
    ...(refused ? { refused } : {}),
    comparison,
    warnings,
    metrics: metricRows(comparison),
    estimates,
    flips: flipTable(a, b),
    cases: caseColumns(baseline, candidate),
    command: gateCommand(candidate.id, baseline.id, options.tolerance, gated, alpha),
  };
}

/** One case's trials side by side, for the rows the page shows. */
export interface CaseOutputs {
  readonly id: string;
  readonly baseline: readonly { readonly output: string; readonly verdict: MetricVerdict | "error" }[];
  readonly candidate: readonly { readonly output: string; readonly verdict: MetricVerdict | "error" }[];
}

const LIMIT = 400;

/**
 * The answers of the given cases in both runs (each cut to 400 characters),
 * with each trial's verdict: what the case table shows for the rows in view.
 *
 * @example caseOutputs(base, cand, ["c07"])[0].candidate[0] // { output: "no", verdict: "fail" }
 */
export function caseOutputs(a: RunView, b: RunView, ids: readonly string[]): CaseOutputs[] {
  const trials = (view: RunView, id: string) =>
    (view.cases.get(id)?.trials ?? []).map((t) => ({
      output:
        t.error !== undefined
          ? `error: ${t.error}`
          : t.output.length > LIMIT
            ? `${t.output.slice(0, LIMIT - 1)}…`
            : t.output,
      verdict: (t.errored ? "error" : t.passed ? "pass" : "fail") as MetricVerdict | "error",
    }));
  return ids.map((id) => ({ id, baseline: trials(a, id), candidate: trials(b, id) }));
}

export interface PowerJobOptions {
  /** The true drop to ask about (a share, e.g. 0.05). */
  readonly drop: number;
  /** The gate's tolerance. */
  readonly tolerance: number;
  readonly alpha?: number;
  /** The power wanted (default 0.8). */
  readonly power?: number;
  /** Repeats per case the gate will see (default: the baseline's). */
  readonly repeats?: number;
  /** P(two trials of a case disagree), for planning (default 0; `calibrate`'s flipRate measures it). */
  readonly flipRate?: number;
}

export interface PowerJobResult {
  /** The gate's chance to fail that drop on the baseline's own cases (their pass rates and clusters). */
  readonly atRuns: PowerResult;
  /** The same question for a run like the baseline at any n: the cases that reach the wanted power, and the curve. */
  readonly planning: PowerResult;
  /** The CLI commands that answer the same two questions. */
  readonly commands: { readonly atRuns: string; readonly planning: string };
  /** Cases the baseline has with a verdict, their pass rate and mean cluster size (the planning model's inputs). */
  readonly baseline: { readonly cases: number; readonly passRate: number; readonly clusterSize: number };
}

/** Simulated gates per estimate: 400 (the CLI's default) up to 10k case-trials, fewer beyond, so a 100k-case run stays seconds. */
export function simulationsFor(cases: number, repeats: number): number {
  return Math.max(40, Math.min(400, Math.round(4e6 / Math.max(1, cases * repeats))));
}

/**
 * Would the gate catch a real drop of this size, and how many cases would
 * it take? Both by issue 14's `power`, which simulates the gate's own rule
 * (its tolerance, repeats, clusters and test): once on the baseline's own
 * cases (their measured pass rates and clusters, as `evalrx power --runs`),
 * and once for a run like it at any n (its pass rate, the flip rate, its
 * mean cluster size), which searches the cases that reach the wanted power.
 *
 * @example powerJob(base, { drop: 0.06, tolerance: 0.03 }).planning.casesForTarget // 850
 */
export function powerJob(baseline: RunView, options: PowerJobOptions): PowerJobResult {
  const rates: number[] = [];
  const clusters: string[] = [];
  for (const c of baseline.cases.values()) {
    const v = metricValue(c, "pass");
    if (v === undefined) continue;
    rates.push(v);
    clusters.push(c.cluster ?? `case:${c.id}`);
  }
  if (rates.length < 2)
    throw new Error(`run '${baseline.id}' has ${rates.length} case(s) with a verdict: too few to simulate the gate on`);
  const clustered = baseline.clusterField !== undefined;
  const repeats = options.repeats ?? baseline.repeats;
  const passRate = rates.reduce((x, y) => x + y, 0) / rates.length;
  const clusterSize = clustered ? Math.max(1, Math.round(rates.length / new Set(clusters).size)) : 1;
  const common = {
    drop: options.drop,
    tolerance: options.tolerance,
    repeats,
    ...(options.alpha !== undefined ? { alpha: options.alpha } : {}),
    ...(options.power !== undefined ? { power: options.power } : {}),
  };
  const simulations = simulationsFor(rates.length, repeats);
  const atRuns = power({ ...common, caseRates: rates, ...(clustered ? { clusters } : {}), simulations });
  const planning = power({
    ...common,
    passRate: Math.min(1, Math.max(1e-6, passRate)),
    flipRate: options.flipRate ?? 0,
    ...(clusterSize > 1 ? { clusterSize } : {}),
  });
  const flags = (o: Record<string, number | undefined>) =>
    Object.entries(o)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `--${k} ${+v!.toPrecision(4)}`)
      .join(" ");
  // The CLI's defaults (α = 0.05, power 0.8) go unsaid, as a person would type the command.
  const shared = {
    drop: options.drop,
    tolerance: options.tolerance,
    repeats,
    alpha: options.alpha === 0.05 ? undefined : options.alpha,
    power: options.power === 0.8 ? undefined : options.power,
  };
  return {
    atRuns,
    planning,
    commands: {
      atRuns: `evalrx power --runs ${baseline.id.replace(/[^\w.-]+/g, "_")}.run.json ${flags({ ...shared, simulations })}`,
      planning: `evalrx power ${flags({ ...shared, "pass-rate": passRate, "flip-rate": options.flipRate ?? 0, "cluster-size": clusterSize > 1 ? clusterSize : undefined })}`,
    },
    baseline: { cases: rates.length, passRate, clusterSize },
  };
}

/**
 * The A/A noise floor of an eval from ≥ 2 runs of it, as `evalrx calibrate`
 * computes it (the same `calibrate`, the same defaults).
 *
 * @example calibrateJob([a1, a2, a3], { target: 0.03 }).recommendedRepeats // 3
 */
export function calibrateJob(
  runs: readonly RunView[],
  options: { target?: number; alpha?: number; simulations?: number },
): Calibration {
  return calibrate(runs, options);
}
