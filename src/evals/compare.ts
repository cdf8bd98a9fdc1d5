import { benjaminiHochberg, comparePaired, holm, type Comparison } from "../stats/index.ts";
import { comparability } from "./fingerprint.ts";
import { metricValue, type RunView } from "./run-view.ts";
import { PASS_METRIC } from "./types.ts";

export type MetricVerdict = "pass" | "fail" | "inconclusive";

/** One metric compared between two runs on their shared unchanged cases. */
export interface MetricTest extends Comparison {
  readonly metric: string;
  /** Gated metrics can fail a gate; the others are exploratory. */
  readonly gated: boolean;
  /** Confidence of [lo, hi]: 1 − α/k for k gated metrics (simultaneous, as Holm controls), 1 − α otherwise. */
  readonly confidence: number;
  /** Holm-adjusted across gated metrics; Benjamini–Hochberg across exploratory ones. */
  readonly pAdjusted: number;
  readonly adjustment: "holm" | "benjamini-hochberg";
  readonly tolerance?: number;
  /** With a tolerance: pass when lo ≥ −tolerance, fail when hi < −tolerance, inconclusive otherwise. */
  readonly verdict?: MetricVerdict;
}

/** Which cases a comparison stands on. */
export interface SharedCases {
  /** Held by both runs with the same case hash: the ones compared. */
  readonly shared: number;
  /** Same id, different hash (input or expected edited). */
  readonly changed: readonly string[];
  readonly onlyBaseline: number;
  readonly onlyCandidate: number;
}

export interface RunComparison {
  readonly baseline: string;
  readonly candidate: string;
  readonly cases: SharedCases;
  readonly alpha: number;
  readonly tests: readonly MetricTest[];
  /** Metrics of both runs that no shared case measured in both. */
  readonly notCompared: readonly string[];
}

export interface CompareRunsOptions {
  /** Metrics that may gate (default ["pass"]); the rest of the shared metrics are exploratory. */
  readonly gated?: readonly string[];
  /** How large a drop matters, per metric. */
  readonly tolerance?: Readonly<Record<string, number>>;
  readonly alpha?: number;
  /** Bootstrap replicates, when the comparison needs the bootstrap. */
  readonly bootstrap?: number;
  readonly seed?: number;
}

/**
 * The one paired test every comparison runs (gate, compare, calibrate's A/A
 * simulations): `comparePaired` at the given confidence, with the gate's
 * bootstrap replicates and seed.
 */
export function pairedTest(
  a: readonly number[],
  b: readonly number[],
  clusters: readonly string[] | undefined,
  confidence: number,
  options: Pick<CompareRunsOptions, "bootstrap" | "seed"> = {},
): Comparison {
  return comparePaired(a, b, clusters, { confidence, replicates: options.bootstrap ?? 2000, seed: options.seed ?? 0 });
}

/** The ids both runs hold unchanged, and how the rest differ. */
export function sharedCases(a: RunView, b: RunView): { ids: string[]; cases: SharedCases } {
  const ids: string[] = [];
  const changed: string[] = [];
  for (const [id, ca] of a.cases) {
    const cb = b.cases.get(id);
    if (!cb) continue;
    if (ca.hash === cb.hash) ids.push(id);
    else changed.push(id);
  }
  ids.sort();
  const both = ids.length + changed.length;
  return {
    ids,
    cases: { shared: ids.length, changed, onlyBaseline: a.cases.size - both, onlyCandidate: b.cases.size - both },
  };
}

/** The verdict of one metric's interval against a tolerance (see `MetricTest.verdict`). */
export function toleranceVerdict(lo: number, hi: number, tolerance: number): MetricVerdict {
  if (lo >= -tolerance) return "pass";
  if (hi < -tolerance) return "fail";
  return "inconclusive";
}

/**
 * How did the candidate do against the baseline, metric by metric? Pairs the
 * two runs on the cases both hold unchanged (same case hash); each case's value
 * is its share of passing trials. `comparePaired` chooses McNemar + Newcombe
 * (0/1 values, independent cases) or the (cluster) bootstrap. Gated metrics'
 * p-values are Holm-adjusted and their intervals widened to 1 − α/k; the other
 * metrics are exploratory (BH). This is the comparison the gate, `compare` and
 * `calibrate` all use.
 *
 * @example compareRuns(baseline, candidate, { tolerance: { pass: 0.03 } }).tests[0]
 *   // { metric: "pass", gated: true, diff: -0.1, lo: …, hi: …, p: 0.125, method: "mcnemar-newcombe", verdict: "inconclusive", … }
 */
export function compareRuns(baseline: RunView, candidate: RunView, options: CompareRunsOptions = {}): RunComparison {
  const alpha = options.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`compare: alpha ${alpha} is not in (0, 1); e.g. 0.05`);
  const { ids, cases } = sharedCases(baseline, candidate);
  const candidateMetrics = new Set(candidate.metrics);
  const metrics = baseline.metrics.filter((m) => candidateMetrics.has(m));
  const gatedWanted = new Set(options.gated ?? [PASS_METRIC]);
  const clustered = baseline.clusterField !== undefined || candidate.clusterField !== undefined;

  const rows: { metric: string; a: number[]; b: number[]; clusters: string[] }[] = [];
  const notCompared: string[] = [];
  for (const metric of metrics) {
    const a: number[] = [];
    const b: number[] = [];
    const clusters: string[] = [];
    for (const id of ids) {
      const ca = baseline.cases.get(id)!;
      const cb = candidate.cases.get(id)!;
      const va = metricValue(ca, metric);
      const vb = metricValue(cb, metric);
      if (va === undefined || vb === undefined) continue;
      a.push(va);
      b.push(vb);
      clusters.push(cb.cluster ?? ca.cluster ?? `case:${id}`);
    }
    if (a.length === 0) notCompared.push(metric);
    else rows.push({ metric, a, b, clusters });
  }
  const gatedRows = rows.filter((r) => gatedWanted.has(r.metric));
  const exploratoryRows = rows.filter((r) => !gatedWanted.has(r.metric));
  const k = Math.max(1, gatedRows.length);
  const run = (row: (typeof rows)[number], confidence: number) =>
    pairedTest(row.a, row.b, clustered ? row.clusters : undefined, confidence, options);
  const gatedResults = gatedRows.map((r) => run(r, 1 - alpha / k));
  const exploratoryResults = exploratoryRows.map((r) => run(r, 1 - alpha));
  const holmP = gatedResults.length ? holm(gatedResults.map((c) => c.p)) : [];
  const bhP = exploratoryResults.length ? benjaminiHochberg(exploratoryResults.map((c) => c.p)) : [];
  const tests: MetricTest[] = [
    ...gatedRows.map((r, i): MetricTest => {
      const c = gatedResults[i]!;
      const tolerance = options.tolerance?.[r.metric];
      return {
        ...c,
        metric: r.metric,
        gated: true,
        confidence: 1 - alpha / k,
        pAdjusted: holmP[i]!,
        adjustment: "holm",
        ...(tolerance !== undefined ? { tolerance, verdict: toleranceVerdict(c.lo, c.hi, tolerance) } : {}),
      };
    }),
    ...exploratoryRows.map((r, i): MetricTest => ({
      ...exploratoryResults[i]!,
      metric: r.metric,
      gated: false,
      confidence: 1 - alpha,
      pAdjusted: bhP[i]!,
      adjustment: "benjamini-hochberg",
    })),
  ];
  return { baseline: baseline.id, candidate: candidate.id, cases, alpha, tests, notCompared };
}

const pts = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)}`;
const METHOD: Record<Comparison["method"], string> = {
  "mcnemar-newcombe": "exact McNemar, Newcombe interval",
  "adjusted-t": "paired t, Agresti–Min adjusted",
  "cluster-t": "cluster-robust t, CR2 + Bell–McCaffrey df; unit: cluster",
  bootstrap: "paired bootstrap",
  "cluster-bootstrap": "cluster bootstrap",
};

/**
 * One line that names the metric, the difference, its interval, the test and
 * the verdict, e.g. `pass: −10.0 pts [−19.5, +0.4] (95% CI), p = 0.125 (exact McNemar, Newcombe interval; Holm), 6 regressed / 1 fixed of 50 — tolerance 3.0 pts → inconclusive`.
 */
export function describeTest(t: MetricTest): string {
  const counts = t.regressed !== undefined ? `, ${t.regressed} regressed / ${t.fixed} fixed of ${t.n}` : `, n = ${t.n}`;
  const adj = t.adjustment === "holm" ? "Holm" : "BH";
  const level = `${+(t.confidence * 100).toFixed(2)}% CI`;
  return (
    `${t.metric}: ${pts(t.diff)} pts [${pts(t.lo)}, ${pts(t.hi)}] (${level}), p = ${t.pAdjusted.toPrecision(3)} ` +
    `(${METHOD[t.method]}; ${adj})${counts}` +
    (t.tolerance !== undefined ? ` — tolerance ${(t.tolerance * 100).toFixed(1)} pts → ${t.verdict}` : "")
  );
}

export interface CompareOptions {
  /** A number for every gated metric, or one per metric; without it nothing is judged. */
  readonly tolerance?: number | Readonly<Record<string, number>>;
  /** The gated metrics (default: those with a tolerance, else ["pass"]). */
  readonly metrics?: readonly string[];
  readonly alpha?: number;
  readonly strict?: boolean;
  readonly bootstrap?: number;
}

export interface CompareResult {
  readonly baseline: string;
  readonly candidate: string;
  /** Undefined without a tolerance: a verdict needs someone to have said how large a drop matters. */
  readonly verdict?: MetricVerdict;
  readonly exitCode?: number;
  readonly reasons: string[];
  readonly warnings: string[];
  readonly comparison: RunComparison;
}

/** Resolves `tolerance` (a number or a per-metric map) over the gated metrics, validating each. */
export function resolveTolerance(
  tolerance: number | Readonly<Record<string, number>> | undefined,
  gated: readonly string[],
  where: string,
): Record<string, number> | undefined {
  if (tolerance === undefined) return undefined;
  if (
    typeof tolerance !== "number" &&
    (tolerance === null || typeof tolerance !== "object" || Array.isArray(tolerance))
  )
    throw new RangeError(
      `${where}: tolerance must be a number or { "<metric>": number }, e.g. 0.03; got ${JSON.stringify(tolerance)}`,
    );
  const map: Record<string, number> =
    typeof tolerance === "number" ? Object.fromEntries(gated.map((m) => [m, tolerance])) : { ...tolerance };
  for (const [m, t] of Object.entries(map))
    if (typeof t !== "number" || !(t > 0 && t < 1))
      throw new RangeError(`${where}: tolerance ${t} for '${m}' is not in (0, 1); e.g. 0.03 for three points`);
  return map;
}

/** Refuses metric names the runs do not have, naming the ones they do. */
export function checkMetrics(names: Iterable<string>, available: readonly string[], what: string): void {
  for (const m of names)
    if (!available.includes(m))
      throw new Error(
        `${what} names '${m}', which is not a metric of this eval; metrics are [${available.map((x) => `'${x}'`).join(", ")}]`,
      );
}

/**
 * Did run B do differently from run A? The gate's comparison for any two runs
 * (B against A, the baseline): differences, intervals and p-values for every
 * shared metric; with a tolerance, a verdict and exit code too.
 *
 * @example compare(main, branch).comparison.tests // every metric, judged nothing
 * @example compare(main, branch, { tolerance: 0.03 }).verdict // "pass" | "fail" | "inconclusive"
 */
export function compare(a: RunView, b: RunView, options: CompareOptions = {}): CompareResult {
  const shared = a.metrics.filter((m) => b.metrics.includes(m));
  const gated =
    options.metrics ??
    (options.tolerance !== undefined && typeof options.tolerance === "object"
      ? Object.keys(options.tolerance)
      : [PASS_METRIC]);
  checkMetrics(gated, shared, "compare");
  const tolerance = resolveTolerance(options.tolerance, gated, "compare");
  if (tolerance) checkMetrics(Object.keys(tolerance), shared, "compare");
  if (tolerance) {
    const missing = gated.filter((m) => tolerance[m] === undefined);
    if (missing.length) throw new Error(`compare: no tolerance for gated metric(s) [${missing.join(", ")}]`);
  }
  const comparison = compareRuns(a, b, {
    gated,
    ...(tolerance ? { tolerance } : {}),
    ...(options.alpha !== undefined ? { alpha: options.alpha } : {}),
    ...(options.bootstrap !== undefined ? { bootstrap: options.bootstrap } : {}),
  });
  if (comparison.cases.shared === 0) throw new Error(`compare: ${nothingShared(a, b, comparison)}`);
  const warnings = comparisonWarnings(a, b, comparison);
  const reasons = comparison.tests.filter((t) => t.gated || !tolerance).map(describeTest);
  if (!tolerance) return { baseline: a.id, candidate: b.id, reasons, warnings, comparison };
  const verdicts: MetricVerdict[] = comparison.tests.filter((t) => t.verdict).map((t) => t.verdict!);
  for (const m of untested(comparison, gated)) {
    verdicts.push("inconclusive");
    reasons.push(`${m}: no shared unchanged case measured it in both runs → inconclusive`);
  }
  const verdict = worstVerdict(verdicts);
  return {
    baseline: a.id,
    candidate: b.id,
    verdict,
    exitCode: exitCodeOf(verdict, options.strict ?? false),
    reasons,
    warnings,
    comparison,
  };
}

/** The gated metrics a comparison has no test for (no shared unchanged case measured them in both runs). */
export function untested(comparison: RunComparison, gated: readonly string[]): string[] {
  return gated.filter((m) => !comparison.tests.some((t) => t.metric === m));
}

/**
 * The verdict of several checks: the worst of them (error, then fail, then
 * inconclusive), pass when none is worse.
 *
 * @example worstVerdict(["pass", "inconclusive", "pass"]) // "inconclusive"
 */
export function worstVerdict<V extends MetricVerdict | "error">(verdicts: readonly V[]): V | "pass" {
  for (const worst of ["error", "fail", "inconclusive"] as V[]) if (verdicts.includes(worst)) return worst;
  return "pass";
}

/** Comparability warnings for a pair of runs: fingerprints, different evals, changed or missing cases. */
export function comparisonWarnings(a: RunView, b: RunView, comparison: RunComparison): string[] {
  const warnings = comparability(a.fingerprint, b.fingerprint);
  if (a.evalKey !== b.evalKey) warnings.unshift(`two different evals: '${a.evalKey}' and '${b.evalKey}'`);
  const { changed, onlyBaseline, onlyCandidate, shared } = comparison.cases;
  if (changed.length)
    warnings.push(
      `${changed.length} case(s) changed between the runs (same id, different input or expected) and are left out: ${changed.slice(0, 5).join(", ")}${changed.length > 5 ? ", …" : ""}`,
    );
  if (onlyBaseline || onlyCandidate)
    warnings.push(
      `compared on ${shared} shared case(s); ${onlyBaseline} only in ${a.id}, ${onlyCandidate} only in ${b.id}`,
    );
  for (const t of comparison.tests) if (t.warning) warnings.push(`${t.metric}: ${t.warning}`);
  return warnings;
}

/** Why a comparison with no shared unchanged case decides nothing (the gate's and compare's error). */
export function nothingShared(a: RunView, b: RunView, comparison: RunComparison): string {
  const { changed, onlyBaseline, onlyCandidate } = comparison.cases;
  return (
    `runs '${a.id}' and '${b.id}' share no unchanged case (${changed.length} changed, ${onlyBaseline} only in '${a.id}', ` +
    `${onlyCandidate} only in '${b.id}'): there is nothing to compare, so there is no verdict`
  );
}

/** The process exit code of a verdict: 0 pass (and inconclusive unless strict), 1 fail, 2 inconclusive under strict, 3 error. */
export function exitCodeOf(verdict: MetricVerdict | "error", strict: boolean): number {
  switch (verdict) {
    case "pass":
      return 0;
    case "fail":
      return 1;
    case "inconclusive":
      return strict ? 2 : 0;
    case "error":
      return 3;
  }
}
