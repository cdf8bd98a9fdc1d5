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

/** Reads the eval config out of a stored run, or says what is missing or malformed. */
export function evalConfig(run: RunRecord): EvalRunConfig {
  const c = (run.config ?? {}) as Partial<EvalRunConfig>;
  if (typeof c.eval !== "string" || !Array.isArray(c.cases) || !c.fingerprint || !Array.isArray(c.evaluators))
    throw new Error(
      `run '${run.id}' is not an eval run (kind '${run.kind}'): its config lacks eval, evaluators, cases or fingerprint`,
    );
  const bad = (why: string): never => {
    throw new Error(`run '${run.id}' is inconsistent: its config's ${why}`);
  };
  if (!Number.isSafeInteger(c.repeats) || c.repeats! < 1)
    bad(`repeats is ${JSON.stringify(c.repeats)}, not a positive integer`);
  if (typeof c.fingerprint !== "object") bad("fingerprint is not an object");
  const names = new Set<string>();
  c.evaluators.forEach((e, i) => {
    if (!e || typeof e.name !== "string" || !e.name) bad(`evaluators[${i}] has no name`);
    if (names.has(e.name) || e.name === PASS_METRIC) bad(`evaluator name '${e.name}' appears twice`);
    names.add(e.name);
  });
  const ids = new Set<string>();
  c.cases.forEach((k, i) => {
    if (!k || typeof k.id !== "string" || typeof k.hash !== "string" || !Array.isArray(k.tags))
      bad(`cases[${i}] is not { id, hash, tags }`);
    if (ids.has(k.id)) bad(`case '${k.id}' is planned twice`);
    ids.add(k.id);
  });
  return c as EvalRunConfig;
}

/** One item as a message names it: its case and repeat, or its position when those are unreadable. */
function itemName(item: Partial<ItemRecord>, at: number): string {
  return typeof item?.caseId === "string" && Number.isInteger(item.repeat)
    ? `the item of case '${item.caseId}' repeat ${item.repeat}`
    : `item ${at}`;
}

/**
 * Are these items a consistent record of the run's plan? Each item a planned
 * case and a repeat inside the plan (at the plan's index, when it has one),
 * judged once; its verdict a boolean that agrees with its checks (passed
 * exactly when it has no error and every check passed without error); each
 * check one of the run's evaluators, once. Throws naming the first item that
 * is not: a hand-edited or corrupted run must not change a gate's result.
 */
function checkItems(run: RunRecord, config: EvalRunConfig, items: readonly ItemRecord[]): void {
  const position = new Map(config.cases.map((c, i) => [c.id, i]));
  const evaluators = new Set(config.evaluators.map((e) => e.name));
  const seen = new Map<string, number>();
  const fail = (item: Partial<ItemRecord>, at: number, why: string): never => {
    throw new Error(`run '${run.id}' is inconsistent: ${itemName(item, at)} ${why}`);
  };
  items.forEach((item, at) => {
    if (!item || typeof item !== "object") fail(item, at, "is not an object");
    if (typeof item.caseId !== "string") fail(item, at, `has caseId ${JSON.stringify(item.caseId)}, not a string`);
    const p = position.get(item.caseId);
    if (p === undefined) fail(item, at, "is of a case the run did not plan");
    if (!Number.isInteger(item.repeat) || item.repeat < 0 || item.repeat >= config.repeats)
      fail(
        item,
        at,
        `has repeat ${JSON.stringify(item.repeat)}, outside the run's ${config.repeats} repeat(s) (0–${config.repeats - 1})`,
      );
    if (item.index !== undefined && item.index !== p! * config.repeats + item.repeat)
      fail(
        item,
        at,
        `has index ${JSON.stringify(item.index)}, not its place in the plan (${p! * config.repeats + item.repeat})`,
      );
    const key = `${item.caseId}\u0000${item.repeat}`;
    const first = seen.get(key);
    if (first !== undefined) fail(item, at, `is recorded twice (items ${first} and ${at}); each trial is judged once`);
    seen.set(key, at);
    if (typeof item.passed !== "boolean")
      fail(item, at, `has verdict ${JSON.stringify(item.passed) ?? "missing"}; expected true or false`);
    if (item.error !== undefined && typeof item.error !== "string") fail(item, at, "has an error that is not text");
    if (!Array.isArray(item.checks)) fail(item, at, "has no list of checks");
    const names = new Set<string>();
    let allPassed = true;
    for (const c of item.checks) {
      if (!c || typeof c.name !== "string") fail(item, at, "has a check without a name");
      if (!evaluators.has(c.name)) fail(item, at, `has a check '${c.name}', which is not an evaluator of this run`);
      if (names.has(c.name)) fail(item, at, `has check '${c.name}' twice`);
      names.add(c.name);
      if (typeof c.passed !== "boolean")
        fail(
          item,
          at,
          `has check '${c.name}' with verdict ${JSON.stringify(c.passed) ?? "missing"}; expected true or false`,
        );
      if (!c.passed || c["errored"] === true) allPassed = false;
    }
    const expected = item.error === undefined && item.checks.length > 0 && allPassed;
    if (item.passed && !expected)
      fail(
        item,
        at,
        item.error !== undefined
          ? "is marked passed but its model call errored"
          : "is marked passed but a check failed or errored",
      );
    if (!item.passed && expected) fail(item, at, "is marked failed but every check passed");
  });
}

/**
 * Turns a stored run and its items into a `RunView`. Items that do not fit
 * the run's plan (an unplanned case or repeat, a trial twice, a verdict that
 * is not a boolean or disagrees with its checks) are refused naming the item
 * (a corrupt store or a tampered run file), never silently dropped or counted.
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
  checkItems(run, config, items);
  for (const item of items) cases.get(item.caseId)!.trials.push(trialFromItem(item));
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
