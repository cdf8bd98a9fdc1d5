import { estimate } from "../stats/index.ts";
import {
  checkMetrics,
  compareRuns,
  comparisonWarnings,
  describeTest,
  exitCodeOf,
  nothingShared,
  resolveTolerance,
  untested,
  worstVerdict,
  type MetricVerdict,
  type RunComparison,
} from "./compare.ts";
import { caseValues, type RunView } from "./run-view.ts";
import { PASS_METRIC } from "./types.ts";

/** When a run passes, as data (JSON-serialisable, so it can sit in an eval config). */
export interface Gate {
  /** Absolute floors: a number is the pass rate's; or one per metric. */
  readonly threshold?: number | Readonly<Record<string, number>>;
  /** `"latest"` (the last finished run of the same eval) or a run id. */
  readonly baseline?: string;
  /** How large a drop matters: one number for every gated metric, or one per metric. Required with a baseline. */
  readonly tolerance?: number | Readonly<Record<string, number>>;
  /** Metrics that can fail the run against the baseline (default: those with a tolerance, else ["pass"]). */
  readonly metrics?: readonly string[];
  /** Cases with this tag must pass every trial (no statistics); null turns the tier off. */
  readonly mustPassTag: string | null;
  /** More than this share of errored trials makes the verdict `error`. */
  readonly maxErrorRate: number;
  readonly alpha: number;
  /** Inconclusive exits 2 instead of 0. */
  readonly strict: boolean;
  /** Bootstrap replicates per comparison. */
  readonly bootstrap: number;
}

export type GateInit = Partial<Gate>;

export type GateVerdict = MetricVerdict | "error";

export interface ThresholdCheck {
  readonly metric: string;
  readonly floor: number;
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
  readonly method: string;
  /** False only when the interval lies entirely under the floor (the metric is shown to be below it). */
  readonly passed: boolean;
  /** fail: interval entirely under the floor; inconclusive: the mean is under it but the interval reaches it; pass otherwise. */
  readonly verdict: MetricVerdict;
}

export interface GateResult {
  readonly run: string;
  readonly verdict: GateVerdict;
  readonly exitCode: number;
  /** Why the verdict is what it is: one line per decisive check (tests, intervals, cases). */
  readonly reasons: string[];
  readonly warnings: string[];
  /** The baseline comparison, when the gate has a baseline. */
  readonly comparison?: RunComparison;
  readonly thresholds: readonly ThresholdCheck[];
  readonly mustPass?: { readonly tag: string; readonly cases: number; readonly failed: readonly string[] };
  readonly errors: { readonly trials: number; readonly errored: number; readonly rate: number; readonly max: number };
}

/**
 * A gate, validated, with its defaults filled in. Throws (naming what was
 * expected) on a tolerance outside (0, 1), a baseline without a tolerance, and
 * rates or α outside their ranges.
 *
 * @example Gate({ baseline: "latest", tolerance: 0.03 }) // { mustPassTag: "critical", maxErrorRate: 0.05, alpha: 0.05, strict: false, bootstrap: 2000, … }
 */
export function Gate(init: GateInit = {}): Gate {
  const gate: Gate = {
    ...init,
    mustPassTag: init.mustPassTag === undefined ? "critical" : init.mustPassTag,
    maxErrorRate: init.maxErrorRate ?? 0.05,
    alpha: init.alpha ?? 0.05,
    strict: init.strict ?? false,
    bootstrap: init.bootstrap ?? 2000,
  };
  if (!(gate.maxErrorRate >= 0 && gate.maxErrorRate <= 1))
    throw new RangeError(`Gate: maxErrorRate ${gate.maxErrorRate} is not in [0, 1]; e.g. 0.05`);
  if (!(gate.alpha > 0 && gate.alpha < 1))
    throw new RangeError(`Gate: alpha ${gate.alpha} is not in (0, 1); e.g. 0.05`);
  if (!Number.isInteger(gate.bootstrap) || gate.bootstrap < 100)
    throw new RangeError(`Gate: bootstrap ${gate.bootstrap} must be an integer ≥ 100; e.g. 2000`);
  resolveTolerance(gate.tolerance, gatedMetrics(gate), "Gate");
  if (gate.baseline !== undefined && gate.tolerance === undefined)
    throw new Error(`Gate: a baseline ('${gate.baseline}') needs a tolerance per gated metric, e.g. tolerance: 0.03`);
  for (const [m, floor] of Object.entries(thresholds(gate)))
    if (typeof floor !== "number" || !(floor >= 0 && floor <= 1))
      throw new RangeError(`Gate: threshold ${floor} for '${m}' is not in [0, 1]; e.g. 0.8`);
  return gate;
}

/** The metrics a baseline comparison may fail the run on. */
export function gatedMetrics(gate: Pick<Gate, "metrics" | "tolerance">): string[] {
  if (gate.metrics?.length) return [...gate.metrics];
  if (gate.tolerance !== undefined && typeof gate.tolerance === "object") return Object.keys(gate.tolerance);
  return [PASS_METRIC];
}

function thresholds(gate: Gate): Record<string, number> {
  if (gate.threshold === undefined) return {};
  return typeof gate.threshold === "number" ? { [PASS_METRIC]: gate.threshold } : { ...gate.threshold };
}

/** Every metric name the gate mentions, to check against the eval's. */
export function gateMetricNames(gate: Gate): string[] {
  const names = new Set<string>(Object.keys(thresholds(gate)));
  if (gate.baseline !== undefined || gate.tolerance !== undefined || gate.metrics) {
    for (const m of gatedMetrics(gate)) names.add(m);
    if (gate.tolerance !== undefined && typeof gate.tolerance === "object")
      for (const m of Object.keys(gate.tolerance)) names.add(m);
  }
  return [...names];
}

/**
 * Can this gate judge runs of an eval with these metrics? Throws, naming the
 * metric and the eval's metrics, when it cannot — before anything is run.
 *
 * @example validateGate(Gate({ threshold: { acc: 0.8 } }), ["pass", "yesNo"]) // throws "the gate names 'acc', which is not a metric of this eval; metrics are ['pass', 'yesNo']"
 */
export function validateGate(spec: Gate | GateInit, metrics: readonly string[]): Gate {
  const g = Gate(spec);
  checkMetrics(gateMetricNames(g), metrics, "the gate");
  return g;
}

/**
 * Does this run pass? In order of precedence:
 * - error budget: more than `maxErrorRate` of trials errored → `error` (exit 3);
 * - must-pass tier: a case tagged `mustPassTag` that failed any trial → `fail`;
 * - thresholds: a metric whose interval (at 1 − α, cluster-aware) lies entirely under its floor
 *   → `fail`; its mean under the floor but the interval reaching it → `inconclusive` (a model
 *   exactly at the floor is not failed half the time by noise);
 * - baseline: each gated metric compared on the shared unchanged cases
 *   (`compareRuns`): fail when its interval lies entirely below −tolerance,
 *   pass when it lies entirely at or above it, inconclusive otherwise.
 * Exit codes: 0 pass (and inconclusive unless strict), 1 fail, 2 inconclusive under strict, 3 error.
 * The baseline run, when the gate has one, is passed in resolved (see `resolveBaseline` in the CLI).
 *
 * @example gate(candidate, Gate({ baseline: "latest", tolerance: 0.03 }), baseline)
 *   // { verdict: "fail", exitCode: 1, reasons: ["pass: −24.0 pts [−37.1, −13.2] (95% CI), p = 0.000488 (exact McNemar…) — tolerance 3.0 pts → fail"], … }
 */
export function gate(run: RunView, spec: Gate | GateInit, baseline?: RunView): GateResult {
  const g = validateGate(spec, run.metrics);
  if (g.baseline !== undefined && !baseline)
    throw new Error(`the gate compares with baseline '${g.baseline}', but no baseline run was given`);
  if (baseline && baseline.evalKey !== run.evalKey)
    throw new Error(
      `baseline '${baseline.id}' is a run of eval '${baseline.evalKey}', not of '${run.evalKey}'; choose a run of the same eval`,
    );
  if (baseline && baseline.id === run.id) throw new Error(`run '${run.id}' cannot be its own baseline`);

  const reasons: string[] = [];
  const warnings: string[] = [];
  const found: GateVerdict[] = [];
  if (run.status !== "finished")
    warnings.push(`run '${run.id}' is ${run.status}, not finished: it is judged on what it holds`);

  // Error budget.
  let trials = 0;
  let errored = 0;
  for (const c of run.cases.values())
    for (const t of c.trials) {
      trials++;
      if (t.errored) errored++;
    }
  const rate = trials ? errored / trials : 0;
  const errors = { trials, errored, rate, max: g.maxErrorRate };
  if (trials === 0) {
    found.push("error");
    reasons.push(`run '${run.id}' holds no trials`);
  } else if (rate > g.maxErrorRate) {
    found.push("error");
    reasons.push(
      `${errored} of ${trials} trials errored (${(rate * 100).toFixed(1)}% > the ${(g.maxErrorRate * 100).toFixed(1)}% budget): an infrastructure error, not a verdict on the model`,
    );
  } else if (errored) warnings.push(`${errored} of ${trials} trials errored (within the budget); they are left out`);

  // Must-pass tier.
  let mustPass: GateResult["mustPass"];
  if (g.mustPassTag) {
    const tagged = [...run.cases.values()].filter((c) => c.tags.includes(g.mustPassTag!));
    const failed = tagged.filter((c) => c.trials.some((t) => !t.errored && !t.passed)).map((c) => c.id);
    mustPass = { tag: g.mustPassTag, cases: tagged.length, failed };
    if (failed.length) {
      found.push("fail");
      reasons.push(
        `${failed.length} of ${tagged.length} '${g.mustPassTag}' case(s) failed (must pass, no statistics): ${failed.slice(0, 10).join(", ")}${failed.length > 10 ? ", …" : ""}`,
      );
    }
  }

  // Absolute thresholds.
  const checks: ThresholdCheck[] = [];
  for (const [metric, floor] of Object.entries(thresholds(g))) {
    const { values, clusters } = caseValues(run, metric);
    if (values.length === 0) {
      found.push("inconclusive");
      reasons.push(`${metric}: no case measured it, so its floor ${floor} cannot be checked → inconclusive`);
      continue;
    }
    const e = estimate(values, clusters, { bounds: [0, 1], confidence: 1 - g.alpha });
    const verdict: MetricVerdict = e.hi < floor ? "fail" : e.mean < floor ? "inconclusive" : "pass";
    const passed = verdict !== "fail";
    checks.push({ metric, floor, mean: e.mean, lo: e.lo, hi: e.hi, n: e.n, method: e.method, passed, verdict });
    if (e.warning) warnings.push(`${metric}: ${e.warning}`);
    const shown = `${metric}: ${(e.mean * 100).toFixed(1)}% [${(e.lo * 100).toFixed(1)}, ${(e.hi * 100).toFixed(1)}] (${e.method}, n = ${e.n})`;
    if (verdict === "fail") {
      found.push("fail");
      reasons.push(`${shown} lies entirely under the floor ${(floor * 100).toFixed(1)}% → fail`);
    } else if (verdict === "inconclusive") {
      found.push("inconclusive");
      reasons.push(
        `${shown} is under the floor ${(floor * 100).toFixed(1)}% but its interval reaches it: not shown to be below → inconclusive`,
      );
    }
  }

  // Baseline comparison.
  let comparison: RunComparison | undefined;
  if (baseline) {
    const gated = gatedMetrics(g);
    checkMetrics(gated, baseline.metrics, `the gate (baseline '${baseline.id}')`);
    const tolerance = resolveTolerance(g.tolerance, gated, "Gate")!;
    const missing = gated.filter((m) => tolerance[m] === undefined);
    if (missing.length)
      throw new Error(
        `the gate has no tolerance for gated metric(s) [${missing.join(", ")}]; give one per gated metric`,
      );
    comparison = compareRuns(baseline, run, { gated, tolerance, alpha: g.alpha, bootstrap: g.bootstrap });
    warnings.push(...comparisonWarnings(baseline, run, comparison));
    if (comparison.cases.shared === 0) {
      // Nothing in common is no evidence of anything: an error, never a pass.
      found.push("error");
      reasons.push(nothingShared(baseline, run, comparison));
    }
    for (const t of comparison.tests) {
      if (!t.gated) continue;
      found.push(t.verdict!);
      reasons.push(describeTest(t));
    }
    for (const m of untested(comparison, gated)) {
      found.push("inconclusive");
      reasons.push(`${m}: no shared unchanged case measured it in both runs → inconclusive`);
    }
  }

  const verdict: GateVerdict = worstVerdict(found);
  if (verdict === "pass" && reasons.length === 0) {
    const parts = [
      ...checks.map((c) => `${c.metric} ${(c.mean * 100).toFixed(1)}% ≥ floor ${(c.floor * 100).toFixed(1)}%`),
      ...(mustPass?.cases ? [`all ${mustPass.cases} '${mustPass.tag}' case(s) passed`] : []),
    ];
    reasons.push(parts.length ? parts.join("; ") : "nothing to check failed (no threshold, no baseline)");
  }
  return {
    run: run.id,
    verdict,
    exitCode: exitCodeOf(verdict, g.strict),
    reasons,
    warnings,
    ...(comparison ? { comparison } : {}),
    thresholds: checks,
    ...(mustPass ? { mustPass } : {}),
    errors,
  };
}
