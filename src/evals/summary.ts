import { estimate, passHatK } from "../stats/index.ts";
import type { Fingerprint } from "./fingerprint.ts";
import { caseValues, trialVerdict, type RunView } from "./run-view.ts";
import { PASS_METRIC, type CheckResult, type Evaluator } from "./types.ts";

/** One metric of a run: the mean of per-case pass shares with its interval, and trial counts. */
export interface MetricSummary {
  readonly name: string;
  /** Cases with at least one counted trial. */
  readonly n: number;
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly se: number | null;
  /** `wilson`, `clt` or `clustered` (see `estimate`). */
  readonly method: string;
  readonly trials: number;
  readonly passed: number;
  readonly errored: number;
  /** Mean check score over trials that have one. */
  readonly score?: number;
  /** The evaluator's own run-level numbers (POPE precision/recall/F1, CHAIR_s/CHAIR_i, …). */
  readonly aggregate?: Readonly<Record<string, number>>;
}

/** What a report and the gate read about a run. */
export interface EvalSummary {
  readonly eval: string;
  readonly run: string;
  readonly status: string;
  readonly cases: number;
  readonly trials: number;
  readonly errored: number;
  readonly errorRate: number;
  readonly repeats: number;
  readonly clusterField?: string;
  /** The pass rate (every check passed), with its interval. */
  readonly pass: MetricSummary | null;
  /** Per evaluator. */
  readonly metrics: Readonly<Record<string, MetricSummary | null>>;
  /** pass^k with k = repeats: the chance all k trials of a case pass, averaged over cases (repeats > 1). */
  readonly passHatK?: { readonly k: number; readonly value: number };
  /** Cases whose trials disagree (repeats > 1). */
  readonly flaky?: { readonly count: number; readonly share: number; readonly cases: readonly string[] };
  readonly latency: { readonly p50: number; readonly p95: number; readonly n: number } | null;
  readonly fingerprint: Fingerprint;
}

/**
 * The q-quantile of ascending values, interpolated linearly between order
 * statistics (numpy's default), so p50 of [10, 20] is 15.
 *
 * @example quantile([10, 20, 30, 40], 0.95) // 38.5
 */
export function quantile(sorted: readonly number[], q: number): number {
  const h = (sorted.length - 1) * q;
  const i = Math.floor(h);
  const lo = sorted[i]!;
  return i + 1 >= sorted.length ? lo : lo + (h - i) * (sorted[i + 1]! - lo);
}

function metricSummary(view: RunView, name: string, evaluator?: Evaluator): MetricSummary | null {
  let trials = 0;
  let passed = 0;
  let errored = 0;
  let scoreSum = 0;
  let scored = 0;
  const results: CheckResult[] = [];
  for (const c of view.cases.values()) {
    for (const t of c.trials) {
      trials++;
      const verdict = trialVerdict(t, name);
      if (verdict === undefined) {
        errored++;
        continue;
      }
      if (verdict) passed++;
      if (name === PASS_METRIC) continue;
      const check = t.checks[name]!;
      if (check.score !== undefined) {
        scoreSum += check.score;
        scored++;
      }
      results.push({ passed: check.passed, ...(check.data ? { data: check.data } : {}) });
    }
  }
  const { values, clusters } = caseValues(view, name);
  if (values.length === 0) return null;
  const e = estimate(values, clusters, { bounds: [0, 1] });
  const aggregate = evaluator?.aggregate?.(results);
  return {
    name,
    n: e.n,
    mean: e.mean,
    lo: e.lo,
    hi: e.hi,
    se: e.se,
    method: e.method,
    trials,
    passed,
    errored,
    ...(scored ? { score: scoreSum / scored } : {}),
    ...(aggregate && Object.keys(aggregate).length ? { aggregate } : {}),
  };
}

/**
 * What did this run find? Cases, trials, errors; the pass rate and each
 * evaluator's rate as means of per-case pass shares with intervals
 * (`estimate`: Wilson for 0/1, clustered when the run names a cluster field);
 * pass^k and the flaky cases when repeats > 1; p50/p95 latency; and the
 * fingerprint. Given the evaluators, their run-level aggregates too.
 *
 * @example summarize(view).pass // { mean: 0.84, lo: 0.79, hi: 0.88, method: "clustered", … }
 */
export function summarize(view: RunView, evaluators: readonly Evaluator[] = []): EvalSummary {
  const byName = new Map(evaluators.map((e) => [e.name, e]));
  let trials = 0;
  let errored = 0;
  const latencies: number[] = [];
  const flaky: string[] = [];
  let hatSum = 0;
  let hatN = 0;
  const k = view.repeats;
  for (const c of view.cases.values()) {
    let p = 0;
    let t = 0;
    for (const trial of c.trials) {
      trials++;
      if (trial.errored) errored++;
      else {
        t++;
        if (trial.passed) p++;
      }
      if (trial.error === undefined) latencies.push(trial.latencyMs);
    }
    if (p > 0 && p < t) flaky.push(c.id);
    if (k > 1 && t >= k) {
      hatSum += passHatK(p, t, k);
      hatN++;
    }
  }
  latencies.sort((a, b) => a - b);
  const metrics: Record<string, MetricSummary | null> = {};
  for (const m of view.metrics) if (m !== PASS_METRIC) metrics[m] = metricSummary(view, m, byName.get(m));
  return {
    eval: view.evalKey,
    run: view.id,
    status: view.status,
    cases: view.cases.size,
    trials,
    errored,
    errorRate: trials ? errored / trials : 0,
    repeats: view.repeats,
    ...(view.clusterField !== undefined ? { clusterField: view.clusterField } : {}),
    pass: metricSummary(view, PASS_METRIC),
    metrics,
    ...(k > 1 && hatN ? { passHatK: { k, value: hatSum / hatN } } : {}),
    ...(k > 1
      ? { flaky: { count: flaky.length, share: flaky.length / (view.cases.size || 1), cases: flaky.slice(0, 100) } }
      : {}),
    latency: latencies.length
      ? { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), n: latencies.length }
      : null,
    fingerprint: view.fingerprint,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/**
 * A few lines a person reads: the pass rate with its interval and method,
 * each metric, pass^k and flaky cases, errors, latency.
 *
 * @example formatSummary(summary) // "eval pope-yesno · run … · 80 cases × 3 repeats\npass 71.3% [63.0%, 78.4%] (clustered) …"
 */
export function formatSummary(s: EvalSummary): string {
  const line = (m: MetricSummary) =>
    `${m.name} ${pct(m.mean)} [${pct(m.lo)}, ${pct(m.hi)}] (${m.method}, n = ${m.n})` +
    (m.aggregate
      ? " · " +
        Object.entries(m.aggregate)
          .map(([k, v]) => `${k} ${v.toFixed(3)}`)
          .join(", ")
      : "");
  return [
    `eval ${s.eval} · run ${s.run} (${s.status}) · ${s.cases} cases × ${s.repeats} repeat(s) = ${s.trials} trials, ${s.errored} errored`,
    s.pass ? line(s.pass) : "pass: no trial has a verdict",
    ...Object.values(s.metrics).flatMap((m) => (m ? [line(m)] : [])),
    ...(s.passHatK ? [`pass^${s.passHatK.k} ${pct(s.passHatK.value)}`] : []),
    ...(s.flaky ? [`flaky cases: ${s.flaky.count} (${pct(s.flaky.share)})`] : []),
    ...(s.latency ? [`latency p50 ${s.latency.p50.toFixed(0)} ms, p95 ${s.latency.p95.toFixed(0)} ms`] : []),
  ].join("\n");
}
