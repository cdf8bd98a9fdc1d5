import type { ItemRecord, RunRecord, RunStatus } from "../store/types.ts";
import type { Fingerprint } from "./fingerprint.ts";
import { PASS_METRIC, type CheckOutcome } from "./types.ts";

/** One trial (case × repeat) as the statistics read it. */
export interface TrialView {
  readonly repeat: number;
  readonly output: string;
  /** Every check passed and nothing errored. */
  readonly passed: boolean;
  /** The model failed, or some check errored: the trial has no `pass` verdict. */
  readonly errored: boolean;
  /** The model's error, when generation itself failed. */
  readonly error?: string;
  readonly checks: Readonly<Record<string, CheckOutcome>>;
  readonly latencyMs: number;
}

/** One case of a run with its trials. */
export interface CaseView {
  readonly id: string;
  /** `caseHash` when the run was made: a different hash is a different case. */
  readonly hash: string;
  readonly tags: readonly string[];
  readonly split?: string;
  /** The cluster value, when the run names a cluster field. */
  readonly cluster?: string;
  readonly trials: TrialView[];
}

/**
 * A run as every consumer reads it (summary, gate, compare, calibrate, and the
 * diagnosis loop's labels): its cases, each with its trials' verdicts.
 */
export interface RunView {
  readonly id: string;
  /** Which eval this is a run of: runs of one eval can be baselines of each other. */
  readonly evalKey: string;
  readonly status: RunStatus;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly repeats: number;
  /** `pass` and each evaluator's name. */
  readonly metrics: readonly string[];
  /** The case field that groups cases, when one was set (then intervals are clustered). */
  readonly clusterField?: string;
  readonly fingerprint: Fingerprint;
  readonly cases: ReadonlyMap<string, CaseView>;
  /** The summary stored with the run, when it was read from a store. */
  readonly summary?: Readonly<Record<string, unknown>>;
}

/**
 * One trial's verdict on one metric: `undefined` when it has none (the trial
 * errored, or, for an evaluator, that check is missing or errored).
 *
 * @example trialVerdict(trial, "yesNo") // true, false, or undefined for an errored check
 */
export function trialVerdict(t: TrialView, metric: string): boolean | undefined {
  if (metric === PASS_METRIC) return t.errored ? undefined : t.passed;
  const check = t.checks[metric];
  return t.error !== undefined || !check || check.errored ? undefined : check.passed;
}

/**
 * One case's value of one metric: the share of its counted trials that passed
 * (those with a `trialVerdict`); `undefined` when no trial counts.
 *
 * @example metricValue(caseView, "pass") // 2/3 for a case that passed 2 of 3 trials
 */
export function metricValue(c: CaseView, metric: string): number | undefined {
  let passed = 0;
  let counted = 0;
  for (const t of c.trials) {
    const v = trialVerdict(t, metric);
    if (v === undefined) continue;
    counted++;
    if (v) passed++;
  }
  return counted === 0 ? undefined : passed / counted;
}

/**
 * What `estimate` reads for one metric of a run: each case's value (see
 * `metricValue`; cases without one are skipped) and, when the run names a
 * cluster field, each case's cluster (the case itself when it has none).
 *
 * @example caseValues(view, "pass") // { values: [1, 0.667, …], clusters: ["scene-3", …] }
 */
export function caseValues(view: RunView, metric: string): { values: number[]; clusters: string[] | undefined } {
  const values: number[] = [];
  const clusters: string[] = [];
  for (const c of view.cases.values()) {
    const v = metricValue(c, metric);
    if (v === undefined) continue;
    values.push(v);
    clusters.push(c.cluster ?? `case:${c.id}`);
  }
  return { values, clusters: view.clusterField !== undefined ? clusters : undefined };
}

/** Per-case facts a run records in its config, so the run reads the same after its dataset changes. */
export interface RunCaseInfo {
  readonly id: string;
  readonly hash: string;
  readonly tags: readonly string[];
  readonly split?: string;
  readonly cluster?: string;
}

/** What `runEval` writes into `RunRecord.config` (and what `runView` reads back). */
export interface EvalRunConfig {
  readonly eval: string;
  readonly repeats: number;
  readonly clusterField?: string;
  readonly evaluators: readonly { readonly name: string; readonly version: string; readonly kind: string }[];
  readonly fingerprint: Fingerprint;
  readonly cases: readonly RunCaseInfo[];
  /** The run whose outputs this one re-judged (see `rescore`). */
  readonly rescoreOf?: string;
  readonly [key: string]: unknown;
}

/** Reads the eval config out of a stored run, or says what is missing. */
export function evalConfig(run: RunRecord): EvalRunConfig {
  const c = run.config as Partial<EvalRunConfig>;
  if (typeof c.eval !== "string" || !Array.isArray(c.cases) || !c.fingerprint || !Array.isArray(c.evaluators))
    throw new Error(
      `run '${run.id}' is not an eval run (kind '${run.kind}'): its config lacks eval, evaluators, cases or fingerprint`,
    );
  return c as EvalRunConfig;
}

/**
 * Turns a stored run and its items into a `RunView`. Items of cases the run
 * did not plan are refused (a corrupt store), never silently dropped.
 *
 * @example runView(await store.getRun(id), await store.items(id)).cases.get("pope-0001")!.trials.length // 3
 */
export function runView(run: RunRecord, items: readonly ItemRecord[]): RunView {
  const config = evalConfig(run);
  const cases = new Map<string, CaseView>();
  for (const c of config.cases)
    cases.set(c.id, {
      id: c.id,
      hash: c.hash,
      tags: c.tags,
      ...(c.split !== undefined ? { split: c.split } : {}),
      ...(c.cluster !== undefined ? { cluster: c.cluster } : {}),
      trials: [],
    });
  for (const item of items) {
    const c = cases.get(item.caseId);
    if (!c) throw new Error(`run '${run.id}' holds an item of case '${item.caseId}', which the run did not plan`);
    c.trials.push(trialFromItem(item));
  }
  for (const c of cases.values()) c.trials.sort((x, y) => x.repeat - y.repeat);
  return {
    id: run.id,
    evalKey: config.eval,
    status: run.status,
    startedAt: run.startedAt,
    ...(run.finishedAt !== undefined ? { finishedAt: run.finishedAt } : {}),
    repeats: config.repeats,
    metrics: [PASS_METRIC, ...config.evaluators.map((e) => e.name)],
    ...(config.clusterField !== undefined ? { clusterField: config.clusterField } : {}),
    fingerprint: config.fingerprint,
    cases,
    ...(run.summary !== undefined ? { summary: run.summary } : {}),
  };
}

function trialFromItem(item: ItemRecord): TrialView {
  const checks: Record<string, CheckOutcome> = {};
  for (const c of item.checks) {
    checks[c.name] = {
      name: c.name,
      version: typeof c["version"] === "string" ? c["version"] : "",
      passed: c.passed,
      errored: c["errored"] === true,
      ...(c.score !== undefined ? { score: c.score } : {}),
      ...(typeof c["reason"] === "string" ? { reason: c["reason"] } : {}),
      ...(typeof c["error"] === "string" ? { error: c["error"] } : {}),
      ...(c.detail !== undefined && c.detail !== null && typeof c.detail === "object"
        ? { data: c.detail as Record<string, unknown> }
        : {}),
    };
  }
  const errored = item.error !== undefined || Object.values(checks).some((c) => c.errored);
  return {
    repeat: item.repeat,
    output: item.output,
    passed: !errored && item.passed,
    errored,
    ...(item.error !== undefined ? { error: item.error } : {}),
    checks,
    latencyMs: item.latencyMs,
  };
}

/** A check outcome as the store keeps it (`ItemCheck`). */
export function toItemCheck(c: CheckOutcome): ItemRecord["checks"][number] {
  return {
    name: c.name,
    passed: c.passed,
    version: c.version,
    errored: c.errored,
    ...(c.score !== undefined ? { score: c.score } : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.error !== undefined ? { error: c.error } : {}),
    ...(c.data !== undefined ? { detail: c.data } : {}),
  };
}
