/**
 * An investigation (the diagnosis loop M1→M5) inside the model worker, as
 * `evalrx investigate` runs it: the model, the store and the loop all live
 * here, and the page receives the event log and progress counts, throttled.
 * The run's events go to IndexedDB as they are logged; the run config keeps
 * what Resume needs. Resume has the CLI's `--resume` semantics: the stored
 * labels, probes and repair runs are read back (no stored case is judged
 * again), and every stage after setup is recomputed from them.
 */
import { buildReport, investigate, type RunEvent } from "../src/agent/index.ts";
import { LessonDb } from "../src/agent/lessons/lesson-db.browser.ts";
import { TIERS, type Tier } from "../src/agent/repair.ts";
import { investigateAgentic } from "../src/agent/agentic/investigate-agentic.ts";
import { agenticJudgeFor, checkJudgeChoice, withoutKey, type JudgeChoice } from "../src/agent/agentic/judge-choice.ts";
import { workerSandbox } from "../src/agent/sandbox/worker-sandbox.browser.ts";
import type { FailureCase, ImagePixels, Model } from "../src/core/index.ts";
import { canonicalJson, select, sha256Hex, type Selection } from "../src/datasets/index.ts";
import { checkImage } from "../src/datasets/images.ts";
import { labelEvaluators } from "../src/evals/label-evaluators.ts";
import { toRgb } from "../src/models/image.ts";
import { renderReportHtml } from "../src/report/html.ts";
import { neutralizeBidi } from "../src/report/safe-text.ts";
import { announceChange } from "../src/store/changes.browser.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import type { EventRecord, Store, StoredCase } from "../src/store/types.ts";
import { latestEvery } from "./latest-every.ts";
import { keptReads } from "./kept-reads.ts";
import { imageReader } from "./stored-images.ts";
import { checkL4Settings, type L4TrainSettings, type PageL4Factory } from "./l4-job.ts";
import { pooled, type SharedCopy } from "./model-copies.ts";
import type { ModelStatus } from "./model.worker.ts";

/** What an investigation asks, as the page's form fills it (the CLI's options, with a stored dataset). */
export interface InvestigationPlan {
  /** A stored dataset's id. */
  readonly dataset: string;
  /** Which of its cases (split, tags, ids, a stable sample); default all active cases. */
  readonly select?: Selection;
  readonly question: string;
  /** The repair ladder's ceiling (`--max-tier`): L1…L4, or none (M5 is skipped). */
  readonly maxTier: Tier | "none";
  /** Share of the cases (clusters) sealed for M4 (`--holdout`). */
  readonly holdout: number;
  readonly seed: number;
  /** The judge-decided loop (`--agentic`): the rule policy picks each step, analyses run in a locked worker. */
  readonly agentic?: boolean;
  /** Who picks the agentic loop's steps (default the rule policy); its API key is never stored with the run. */
  readonly judge?: JudgeChoice;
  /** Turns the agentic judge gets, refused ones included (default 20); the host stops the loop there. */
  readonly maxTurns?: number;
  /** Probe search before M1 (`--search-probes`): the kept failing variants are stored as a new dataset version. */
  readonly searchProbes?: { readonly budget: number; readonly judgeParaphrases?: boolean };
  /** L4's training settings in the page (default the executor's: 300 Adam steps, lr 0.01, λ 0.05). */
  readonly l4?: L4TrainSettings;
}

/** What the page asks the worker to run (plain data, structured-cloned across). */
export interface InvestigateJobRequest {
  /** IndexedDB database the page uses. */
  readonly db: string;
  /** The plan of a new investigation (a resumed one keeps the plan it was started with). */
  readonly plan?: InvestigationPlan;
  /** How the page loads the model again to resume (kept in the run's config). */
  readonly modelSource: unknown;
  /** The new run's id (made unique when absent). */
  readonly runId?: string;
  /** Continue this interrupted investigation instead. */
  readonly resume?: string;
  /** The code version, recorded in the run and its report. */
  readonly codeVersion?: string;
  /**
   * Copies of the model the investigation runs on (default `DEFAULT_INVESTIGATION_COPIES`): 1, the model worker's
   * own; 2 adds the loaded model's helper copy (`workers/model-copies.ts`). The verdicts are the same either way.
   */
  readonly copies?: 1 | 2;
}

/**
 * One copy unless asked: on this project's 2-core machine, idle (load 2–3), the 600-case demo investigation took
 * 40.3 s on two copies against 38.6 s on one, with 36.3 s of CPU against 27.1 s (the helper's start, its own memo,
 * the calls crossing workers), so the second copy gave no wall time back. Machines with more cores were not measured.
 */
export const DEFAULT_INVESTIGATION_COPIES: 1 | 2 = 1;

/** Labelling, probing or a repair candidate's eval, as its stored items show it. */
export interface InvestigationProgress {
  /** The store run being written: `<id>-m1-label`, `<id>-m1-probe`, `<id>-m5-<candidate>`. */
  readonly run: string;
  readonly stage: "M1" | "M5";
  /** What is being done, in words ("labelling", "probing", "repair candidate attention-crop_rollout"). */
  readonly what: string;
  readonly done: number;
  readonly total: number;
  /** L4 training: the last minibatch loss and the (step, loss) curve so far (`done`/`total` count steps). */
  readonly training?: { readonly loss: number; readonly curve: readonly (readonly [number, number])[] };
}

/** What comes back while the loop runs, at most every `progressEveryMs`: the events logged since the last update. */
export interface InvestigationUpdate {
  readonly runId: string;
  /** Events of this attempt, in order, continuing the previous update's. */
  readonly events: readonly RunEvent[];
  readonly progress?: InvestigationProgress;
}

export interface InvestigateJobResult {
  readonly runId: string;
  readonly status: "finished";
  readonly verdicts: readonly { readonly id: string; readonly verdict: string }[];
}

/** The score of an investigation run that holds its report (the report page's `REPORT_SCORE`). */
export const REPORT_SCORE = "report";

/** The record kind of an investigation run. */
export const INVESTIGATION_KIND = "investigation";

/**
 * The lock name an investigation's writer holds from its first read of the log
 * to its last write (the CLI's `writer.lock` in `--out`): a run marked running
 * whose writer lock nobody holds was interrupted and can be resumed.
 *
 * @example writerLockId("investigate-1") // "investigate-1#writer"
 */
export function writerLockId(runId: string): string {
  return `${runId}#writer`;
}

/** The plan, checked: each wrong field named with what was expected. */
export function checkPlan(plan: unknown): InvestigationPlan {
  const p = (plan ?? {}) as Partial<Record<keyof InvestigationPlan, unknown>>;
  if (typeof p.dataset !== "string" || !p.dataset) throw new Error("plan.dataset: expected a stored dataset's id");
  if (typeof p.question !== "string" || !p.question.trim())
    throw new Error('plan.question: expected the question to answer, e.g. "What predicts the hallucinations?"');
  if (p.maxTier !== "none" && !TIERS.includes(p.maxTier as Tier))
    throw new Error(`plan.maxTier: expected one of ${TIERS.join(", ")} or none, got ${JSON.stringify(p.maxTier)}`);
  if (typeof p.holdout !== "number" || !(p.holdout > 0 && p.holdout < 1))
    throw new Error(`plan.holdout: expected a share strictly between 0 and 1 (e.g. 0.4), got ${String(p.holdout)}`);
  if (typeof p.seed !== "number" || !Number.isInteger(p.seed) || p.seed < 0)
    throw new Error(`plan.seed: expected a whole number ≥ 0, got ${String(p.seed)}`);
  if (p.select !== undefined && (typeof p.select !== "object" || p.select === null))
    throw new Error("plan.select: expected a selection object ({ split, tags, ids, sample })");
  if (p.agentic !== undefined && typeof p.agentic !== "boolean")
    throw new Error(`plan.agentic: expected true or false, got ${JSON.stringify(p.agentic)}`);
  const budget = (p.searchProbes as { budget?: unknown } | undefined)?.budget;
  if (p.searchProbes !== undefined && (typeof budget !== "number" || !Number.isInteger(budget) || budget < 10))
    throw new Error(
      `plan.searchProbes.budget: expected a whole number of model calls, at least 10 (e.g. 400), got ${String(budget)}`,
    );
  const judgeParaphrases = (p.searchProbes as { judgeParaphrases?: unknown } | undefined)?.judgeParaphrases;
  if (judgeParaphrases !== undefined && typeof judgeParaphrases !== "boolean")
    throw new Error(
      `plan.searchProbes.judgeParaphrases: expected true or false, got ${JSON.stringify(judgeParaphrases)}`,
    );
  if (judgeParaphrases && (p.agentic !== true || (p.judge as { kind?: unknown } | undefined)?.kind !== "endpoint"))
    throw new Error(
      "plan.searchProbes.judgeParaphrases: the judge's rewordings need the agentic loop with an endpoint judge (plan.agentic and plan.judge { kind: 'endpoint' })",
    );
  if (
    p.maxTurns !== undefined &&
    (p.agentic !== true || typeof p.maxTurns !== "number" || !Number.isInteger(p.maxTurns) || p.maxTurns < 1)
  )
    throw new Error(
      `plan.maxTurns: expected a whole number of turns ≥ 1 for the agentic loop (plan.agentic), got ${JSON.stringify(p.maxTurns)}`,
    );
  const l4 = p.l4 !== undefined ? checkL4Settings(p.l4) : undefined;
  return {
    dataset: p.dataset,
    question: p.question,
    maxTier: p.maxTier as Tier | "none",
    holdout: p.holdout,
    seed: p.seed,
    ...(p.select ? { select: p.select as Selection } : {}),
    ...(p.agentic === true ? { agentic: true } : {}),
    ...(p.agentic === true && p.judge !== undefined ? { judge: checkJudgeChoice(p.judge) } : {}),
    ...(p.maxTurns !== undefined ? { maxTurns: p.maxTurns } : {}),
    ...(p.searchProbes !== undefined
      ? { searchProbes: { budget: budget as number, ...(judgeParaphrases ? { judgeParaphrases: true } : {}) } }
      : {}),
    ...(l4 ? { l4 } : {}),
  };
}

/**
 * The events of the run's latest attempt. The store keeps every attempt's
 * events one after another in the run's log (the audit trail of what ran
 * before a reload, as the CLI keeps `events.interrupted-<k>.jsonl`); each
 * attempt begins with `run.started` (a resumed one repeats the events it
 * keeps), and its events are numbered from 0 as the CLI's `events.jsonl` is.
 *
 * @example latestAttempt(records).map((e) => e.type) // ["run.started", "data.loaded", "run.resumed", …]
 */
export function latestAttempt(records: readonly EventRecord[]): RunEvent[] {
  return attempts(records).at(-1) ?? [];
}

/** Every attempt's events, oldest first, each numbered from 0. */
export function attempts(records: readonly EventRecord[]): RunEvent[][] {
  const out: RunEvent[][] = [];
  for (const r of records) {
    if (r.type === "run.started" || out.length === 0) out.push([]);
    const list = out.at(-1)!;
    list.push({
      runId: r.runId,
      seq: list.length,
      ts: r.ts,
      stage: r.stage as RunEvent["stage"],
      schema: r.schema,
      type: r.type,
      payload: r.payload as Record<string, unknown>,
    });
  }
  return out;
}

/** The options an attempt was started with, as its run.started and data.loaded events recorded them. */
export interface RecordedOptions {
  readonly question: string;
  readonly seed: number;
  readonly holdout: number;
  readonly maxTier: string;
  readonly model: string;
  readonly fingerprint: string;
  readonly n: number;
}

/** What an attempt's first events say it was started with; undefined without run.started. */
export function recordedOptions(events: readonly RunEvent[]): RecordedOptions | undefined {
  const started = events.find((e) => e.type === "run.started")?.payload;
  if (!started) return undefined;
  const data = events.find((e) => e.type === "data.loaded")?.payload ?? {};
  return {
    question: String(started["question"] ?? ""),
    seed: Number(started["seed"]),
    holdout: Number(started["holdout"]),
    maxTier: String(started["maxTier"]),
    model: String((started["model"] as { key?: unknown } | undefined)?.key ?? ""),
    fingerprint: String(data["fingerprint"] ?? ""),
    n: Number(data["n"]),
  };
}

/**
 * Why a resume is refused: what differs between the interrupted attempt and
 * now, one phrase each (the CLI refuses `--resume` the same way).
 *
 * @example resumeDifferences(before, { ...before, model: "tiny-lm" }) // ["the model is 'tiny-lm' where the run used 'tiny-vlm'"]
 */
export function resumeDifferences(before: RecordedOptions, now: RecordedOptions): string[] {
  const out: string[] = [];
  if (before.model !== now.model) out.push(`the model is '${now.model}' where the run used '${before.model}'`);
  if (before.fingerprint !== now.fingerprint)
    out.push(
      `the dataset's selection now gives ${now.n} case(s) (fingerprint ${now.fingerprint}) where the run had ${before.n} (fingerprint ${before.fingerprint})`,
    );
  if (before.seed !== now.seed) out.push(`the seed is ${now.seed} where the run used ${before.seed}`);
  if (before.holdout !== now.holdout) out.push(`the holdout is ${now.holdout} where the run used ${before.holdout}`);
  if (before.maxTier !== now.maxTier) out.push(`the ceiling is ${now.maxTier} where the run used ${before.maxTier}`);
  if (before.question !== now.question)
    out.push(`the question is ${JSON.stringify(now.question)} where the run asked ${JSON.stringify(before.question)}`);
  return out;
}

/** A stored case as the CLI reads it from its file: the case's own fields, without the store's bookkeeping. */
export function plainCase(stored: StoredCase): FailureCase {
  const { datasetId: _d, hash: _h, label: _l, ...own } = stored;
  return own;
}

/** Decoded RGBA pixels of PNG/JPEG bytes (the attention-guided crops of M5 read them). */
export function rgbaPixels(bytes: Uint8Array | ImagePixels): ImagePixels {
  const { width, height, rgb } = toRgb(bytes);
  const data = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let p = 0, q = 0; p < rgb.length; p += 3, q += 4) data.set(rgb.subarray(p, p + 3), q);
  return { width, height, data };
}

/** The images an investigation keeps read (64 MiB: the demo's 100 images are 0.3 MB; a real dataset's hundreds of photos). */
const KEPT_IMAGE_BYTES = 64 * 2 ** 20;

/** The cases an investigation runs on, read from the store and checked as the CLI checks its file's. */
export interface InvestigationData {
  readonly cases: FailureCase[];
  readonly source: string;
  readonly fingerprint: string;
  /** How the cases were chosen, when not all of them (stated in the report). */
  readonly sampled?: string;
  /** Cases left out, each with the reason. */
  readonly leftOut: readonly { readonly id: string; readonly why: string }[];
  readonly images: (ref: string) => Promise<Uint8Array>;
}

/**
 * A dataset's cases in the order they were imported (the file's order, as the
 * CLI reads it: the loop's permutations and bootstraps draw over rows in
 * order, so the same order gives the CLI's numbers exactly); a store without
 * pages gives them in id order.
 */
export async function importOrder(
  store: Store & { casePage?: (datasetId: string, page: number) => Promise<StoredCase[] | undefined> },
  datasetId: string,
): Promise<StoredCase[]> {
  if (!store.casePage) return store.cases(datasetId);
  const out: StoredCase[] = [];
  for (let p = 0, page; (page = await store.casePage(datasetId, p)); p++) out.push(...page);
  return out;
}

/**
 * Which cases did an investigation run on? 12 hex of sha256 over them in
 * order (canonical JSON, one a line): the page computes it where it chooses
 * them, and the companion checks what arrived against it.
 *
 * @example casesFingerprint(data.cases) // "0c62da0605d0"
 */
export function casesFingerprint(cases: readonly FailureCase[]): string {
  return sha256Hex(cases.map((c) => canonicalJson(c)).join("\n")).slice(0, 12);
}

/**
 * The plan's cases from the store, in their import order, as plain cases; a
 * case whose image cannot be used is left out and named, and the rest go on,
 * as in the CLI.
 */
export async function investigationData(store: Store, plan: InvestigationPlan): Promise<InvestigationData> {
  const dataset = await store.getDataset(plan.dataset);
  if (!dataset)
    throw new Error(
      `the investigation names dataset '${plan.dataset}', which is not stored in this browser; import it on the Datasets page first`,
    );
  const all = (await importOrder(store, dataset.id)).filter((c) => c.status === "active");
  const chosen = select(all, plan.select ?? {}).map(plainCase);
  if (chosen.length === 0)
    throw new Error(
      `the selection ${JSON.stringify(plan.select ?? {})} leaves no case of dataset '${dataset.id}' (${all.length} active cases)`,
    );
  // Every image is read once here, for its check (32 to a transaction), and kept for the model's many asks after.
  const images = keptReads(
    imageReader(
      store,
      chosen.flatMap((c) => c.input.image ?? []),
    ),
    (bytes) => bytes.byteLength,
    KEPT_IMAGE_BYTES,
  );
  const checked = new Map<string, Promise<string | undefined>>();
  const problem = (ref: string) => {
    let found = checked.get(ref);
    if (!found) {
      found = images(ref).then(
        (bytes) => {
          const result = checkImage(bytes);
          return "reason" in result ? `image '${ref}' is not usable: ${result.reason}` : undefined;
        },
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      checked.set(ref, found);
    }
    return found;
  };
  const cases: FailureCase[] = [];
  const leftOut: { id: string; why: string }[] = [];
  // Checked all at once: one read after another waited on the storage thread 100 times before the run began.
  const problems = await Promise.all(
    chosen.map((c) => (c.input.image !== undefined ? problem(c.input.image) : undefined)),
  );
  chosen.forEach((c, i) => {
    const why = problems[i];
    if (why) leftOut.push({ id: c.id, why });
    else cases.push(c);
  });
  if (cases.length === 0) throw new Error(`dataset '${dataset.id}': no selected case has a usable image`);
  const notes: string[] = [];
  const selected = plan.select && Object.keys(plan.select).length > 0;
  if (selected)
    notes.push(
      `${chosen.length} of ${all.length} cases chosen by the selection ${JSON.stringify(plan.select)}${plan.select?.sample !== undefined ? ` (a stable sample: the smallest sha256(id))` : ""}`,
    );
  if (leftOut.length) notes.push(`${leftOut.length} case(s) left out: their images cannot be used`);
  return {
    cases,
    source: dataset.source ?? dataset.name,
    fingerprint: casesFingerprint(cases),
    ...(notes.length ? { sampled: notes.join("; ") } : {}),
    leftOut,
    images,
  };
}

/** The id a new investigation gets: the fingerprint, seed and start time, made unique in the store (as the CLI names its runs). */
export async function newInvestigationId(
  store: Store,
  fingerprint: string,
  seed: number,
  now = new Date(),
): Promise<string> {
  const base = `investigate-${fingerprint}-s${seed}-${now.toISOString().replace(/[-:.]/g, "").slice(0, 15)}`;
  let id = base;
  for (let k = 2; await store.getRun(id); k++) id = `${base}-${k}`;
  return id;
}

/** Which stage and work a store run of an investigation belongs to, from its id. */
export function progressOf(runId: string, storeRun: string): Pick<InvestigationProgress, "stage" | "what"> | undefined {
  if (!storeRun.startsWith(`${runId}-`)) return undefined;
  const rest = storeRun.slice(runId.length + 1);
  if (rest === "m1-label") return { stage: "M1", what: "labelling (the evaluators judge each answer)" };
  if (rest === "m1-probe") return { stage: "M1", what: "probing (one teacher-forced forward per case)" };
  if (rest.startsWith("m5-")) return { stage: "M5", what: `repair candidate ${rest.slice(3)}` };
  return undefined;
}

/**
 * The store as the loop sees it, reporting every batch of judged items
 * (labels, probes, repair candidates) as progress: the loop needs no hook.
 */
function watchedStore(store: Store, onItems: (run: string, done: number, total: number) => void): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "appendItems")
        return async (...args: Parameters<Store["appendItems"]>) => {
          await target.appendItems(...args);
          onItems(args[0], args[2].done, args[2].total);
        };
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The run's headline once finished (shown in lists without reading its log). */
export function summaryOf(events: readonly RunEvent[]): Record<string, unknown> {
  const finished = events.find((e) => e.type === "run.finished")?.payload ?? {};
  const repairs = events.find((e) => e.type === "repairs.finished")?.payload;
  return {
    cases: finished["cases"],
    failures: finished["failures"],
    verdicts: finished["verdicts"],
    ...(repairs ? { fixedBy: repairs["fixedBy"] ?? null } : {}),
  };
}

/**
 * Writes a loop's events to the run's log in order, while the loop goes on:
 * events logged while a write is in flight go together in the next one (one
 * transaction, not one per event), at most `perWrite` at a time; the first
 * failure is kept and thrown by `settled()`. `written` sees each batch once stored.
 */
export function eventWriter(
  store: Store,
  runId: string,
  options: { readonly perWrite?: number; readonly written?: (events: readonly RunEvent[]) => void } = {},
): { persist: (event: RunEvent) => void; settled: () => Promise<void> } {
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  let pending: RunEvent[] = [];
  let queued = false;
  const perWrite = options.perWrite ?? Infinity;
  const persist = (event: RunEvent) => {
    pending.push(event);
    if (queued) return;
    queued = true;
    writing = writing
      .then(async () => {
        queued = false;
        while (pending.length) {
          const events = pending.slice(0, perWrite);
          pending = pending.slice(events.length);
          await store.appendEvents(
            runId,
            events.map((e) => ({ ts: e.ts, stage: e.stage, schema: e.schema, type: e.type, payload: e.payload })),
          );
          options.written?.(events);
        }
      })
      .catch((error: unknown) => {
        failure ??= error;
      });
  };
  /** Resolves once every event persisted so far (and while it waited) is stored; throws the first write failure. */
  const settled = async () => {
    for (let seen = writing; ; seen = writing) {
      await seen;
      if (seen === writing) break;
    }
    if (failure) throw failure;
  };
  return { persist, settled };
}

/**
 * The end of an investigation, as the page and the companion write it once
 * every event before it is stored: `run.finished` at the end of the log, the
 * report where the report page reads a stored one (the run's "report" score,
 * as the CLI writes report.json, so #/report/<id> opens it without folding the
 * log), and only then the run marked finished with its headline.
 */
export async function finishInvestigation(
  store: Store,
  runId: string,
  finished: RunEvent,
  report: Parameters<typeof neutralizeBidi>[0] & { readonly version: number },
  events: readonly RunEvent[],
): Promise<void> {
  await store.appendEvents(runId, [
    { ts: finished.ts, stage: finished.stage, schema: finished.schema, type: finished.type, payload: finished.payload },
  ]);
  await store.putScores([{ runId, name: REPORT_SCORE, value: report.version, detail: neutralizeBidi(report) }]);
  await store.updateRun(runId, {
    status: "finished",
    finishedAt: new Date().toISOString(),
    summary: summaryOf(events),
  });
}

/**
 * Runs (or resumes) one investigation in this worker with the loaded `model`.
 * Updates come at most every `progressEveryMs` (and once at the end);
 * `signal` cancels it, keeping every label, probe and repair run stored so far.
 */
export async function runInvestigationJob(
  request: InvestigateJobRequest,
  model: Model,
  modelInfo: Readonly<Record<string, unknown>>,
  signal: AbortSignal,
  onUpdate: (update: InvestigationUpdate) => void,
  progressEveryMs = 100,
  /** Loads a bundled model as the agentic judge (`plan.judge.kind` "model"). */
  judgeModel?: (key: string) => Promise<Model>,
  /** L4 in the page (`plan.maxTier` "L4"): the head-adapter executor for the loaded model. */
  l4?: PageL4Factory,
  /**
   * The loaded model's helper copy in another worker (`workers/model-copies.ts`): M1's and M5's cases then run on
   * two cores, stored in the same order with the same answers. Absent: every call runs on `model`.
   */
  sharedCopy?: SharedCopy,
): Promise<InvestigateJobResult> {
  const store = await IdbStore.open(request.db);
  try {
    let plan: InvestigationPlan;
    let previous: RunEvent[] | undefined;
    if (request.resume !== undefined) {
      const run = await store.getRun(request.resume);
      if (!run || run.kind !== INVESTIGATION_KIND)
        throw new Error(`no investigation '${request.resume}' is stored in this browser`);
      plan = checkPlan((run.config as { plan?: unknown }).plan);
    } else {
      if (!request.plan) throw new Error("an investigation needs a plan (dataset, question, ceiling, holdout, seed)");
      plan = checkPlan(request.plan);
    }
    const data = await investigationData(store, plan);
    const runId = request.resume ?? request.runId ?? (await newInvestigationId(store, data.fingerprint, plan.seed));
    // One writer per investigation, from the first read of its log to the last write.
    const writer = await store.lockRun(writerLockId(runId));
    let started = false;
    try {
      if (request.resume !== undefined) {
        previous = latestAttempt(await store.events(runId));
        refuseResume(runId, previous, plan, model, data);
        await store.updateRun(runId, { status: "running" });
      } else {
        await store.createRun({
          id: runId,
          kind: INVESTIGATION_KIND,
          dataset: plan.dataset,
          model: model.spec.key,
          fingerprint: data.fingerprint,
          status: "running",
          startedAt: new Date().toISOString(),
          config: {
            plan: plan.judge ? { ...plan, judge: withoutKey(plan.judge) } : plan,
            question: plan.question,
            cases: data.cases.length,
            page: { modelSource: request.modelSource },
            ...(request.codeVersion ? { codeVersion: request.codeVersion } : {}),
          },
        });
      }
      started = true;
      announceChange(request.db, { kind: "runs", id: runId });
      return await loop({
        request,
        store,
        runId,
        plan,
        data,
        model,
        modelInfo,
        previous,
        signal,
        onUpdate,
        progressEveryMs,
        ...(judgeModel ? { judgeModel } : {}),
        ...(l4 ? { l4 } : {}),
        ...(sharedCopy ? { sharedCopy } : {}),
      });
    } catch (error) {
      if (!started) throw error;
      // Whatever was stored stays; the run can be resumed (once the cause is mended).
      const cancelled = signal.aborted;
      await store
        .updateRun(runId, { status: cancelled ? "cancelled" : "failed", finishedAt: new Date().toISOString() })
        .catch(() => undefined);
      announceChange(request.db, { kind: "runs", id: runId });
      if (cancelled)
        throw Object.assign(
          new Error(
            `investigation '${runId}' was cancelled; its labels, probes and repair runs are kept, and Resume goes on from them`,
          ),
          { name: "CancelledError" },
        );
      throw error;
    } finally {
      await writer.release();
    }
  } finally {
    await store.close();
  }
}

/** Refuses to resume a log that cannot be: no start, already finished, or started with other options (as the CLI does). */
function refuseResume(
  runId: string,
  previous: readonly RunEvent[],
  plan: InvestigationPlan,
  model: Model,
  data: InvestigationData,
): void {
  const before = recordedOptions(previous);
  if (!before) throw new Error(`investigation '${runId}' has no run.started event in its log: start a new one`);
  if (previous.some((e) => e.type === "run.finished"))
    throw new Error(`investigation '${runId}' already finished; open its report`);
  const changed = resumeDifferences(before, {
    question: plan.question,
    seed: plan.seed,
    holdout: plan.holdout,
    maxTier: plan.maxTier,
    model: model.spec.key,
    fingerprint: data.fingerprint,
    n: data.cases.length,
  });
  if (changed.length)
    throw new Error(
      `investigation '${runId}' cannot be resumed here: ${changed.join("; ")}. Load the run's model and keep its dataset, or start a new investigation`,
    );
}

interface LoopContext {
  readonly request: InvestigateJobRequest;
  readonly store: IdbStore;
  readonly runId: string;
  readonly plan: InvestigationPlan;
  readonly data: InvestigationData;
  readonly model: Model;
  readonly modelInfo: Readonly<Record<string, unknown>>;
  readonly previous: RunEvent[] | undefined;
  readonly signal: AbortSignal;
  readonly onUpdate: (update: InvestigationUpdate) => void;
  readonly progressEveryMs: number;
  readonly judgeModel?: (key: string) => Promise<Model>;
  readonly l4?: PageL4Factory;
  readonly sharedCopy?: SharedCopy;
}

/**
 * Model calls an investigation keeps in flight per copy of the model: three, so a helper that finishes a call
 * finds the next ones already sent while the model worker is inside its own inference (`inOrder`, `runEval`'s
 * concurrency).
 */
export const CALLS_PER_COPY = 3;

async function loop(context: LoopContext): Promise<InvestigateJobResult> {
  const { request, store, runId, plan, data, model, modelInfo, previous, signal, onUpdate, progressEveryMs } = context;
  let unsent: RunEvent[] = [];
  let progress: InvestigationProgress | undefined;
  // What is new is sent at most every progressEveryMs, and never held back longer than that.
  const updates = latestEvery(progressEveryMs, () => {
    if (!unsent.length && !progress) return;
    onUpdate({ runId, events: unsent, ...(progress ? { progress } : {}) });
    unsent = [];
  });
  const send = (force = false) => updates.push(undefined, force);
  // Events go to the store in order, one write at a time, while the loop goes on. Other tabs following the run
  // read its log again at each stage's start and end (every announcement makes every tab read its lists again:
  // not once per event).
  const { persist, settled } = eventWriter(store, runId, {
    written: (events) => {
      if (events.some((e) => e.type === "stage.started" || e.type === "stage.finished"))
        announceChange(request.db, { kind: "runs", id: runId });
    },
  });
  let finished: RunEvent | undefined;
  const watched = watchedStore(store, (run, done, total) => {
    const where = progressOf(runId, run);
    if (!where) return;
    progress = { run, ...where, done, total };
    send(done === total);
  });
  // The page's lessons store: read at the start to order the work, this run's appended at the end.
  const lessonDb = await LessonDb.open();
  const run = plan.agentic ? investigateAgentic : investigate;
  const l4 =
    plan.maxTier === "L4"
      ? context.l4?.({
          runId,
          images: data.images,
          signal,
          ...(plan.l4 ? { train: plan.l4 } : {}),
          onProgress: (p) => {
            progress = p;
            send(p.done === p.total);
          },
        })
      : undefined;
  const judges = plan.agentic
    ? await agenticJudgeFor(plan.judge, {
        searchProbes: plan.searchProbes !== undefined,
        loadModel: (key) => {
          if (!context.judgeModel) throw new Error(`plan.judge: this worker cannot load a judge model ('${key}')`);
          return context.judgeModel(key);
        },
      })
    : undefined;
  const copies = await pooled(
    model,
    (request.copies ?? DEFAULT_INVESTIGATION_COPIES) === 2 ? context.sharedCopy : undefined,
    {
      callsPerCopy: CALLS_PER_COPY,
      wait: true,
      warn: (message) => console.warn(`investigation: ${message}`),
    },
  );
  const result = await run({
    ...(judges
      ? {
          agentic: {
            judge: judges.agentic,
            sandbox: workerSandbox(),
            ...(plan.maxTurns !== undefined ? { maxTurns: plan.maxTurns } : {}),
          },
        }
      : {}),
    ...(judges?.wording ? { judge: judges.wording } : {}),
    lessons: { where: `IndexedDB ${lessonDb.name}`, read: () => lessonDb.read(), append: (l) => lessonDb.append(l) },
    ...(plan.searchProbes ? { searchProbes: plan.searchProbes } : {}),
    ...(l4 && "executor" in l4 ? { l4: l4.executor } : {}),
    store: watched,
    model: copies.model,
    ...(copies.concurrency > 1 ? { concurrency: copies.concurrency } : {}),
    dataset: { id: plan.dataset, cases: data.cases, source: data.source, fingerprint: data.fingerprint },
    evaluators: labelEvaluators(data.cases),
    images: data.images,
    decodeImage: rgbaPixels,
    protocol: { question: plan.question },
    runId,
    holdout: plan.holdout,
    seed: plan.seed,
    alpha: 0.05,
    maxTier: plan.maxTier,
    ...(request.codeVersion ? { codeVersion: request.codeVersion } : {}),
    ...(data.sampled ? { sampled: data.sampled } : {}),
    modelInfo,
    ...(previous ? { previous } : {}),
    signal,
    sink: (event) => {
      // The end of the run waits until everything before it is stored (the CLI waits for its report files).
      if (event.type === "run.finished") {
        finished = event;
        return;
      }
      persist(event);
      unsent.push(event);
      send();
    },
  }).finally(() =>
    Promise.all([
      // A failed or cancelled loop says nothing more; a finished one says its end below.
      updates.stop(),
      lessonDb.close(),
      judges?.dispose(),
      l4 && "dispose" in l4 ? l4.dispose() : undefined,
      copies.close(),
    ]),
  );
  await settled();
  if (!finished) throw new Error("the loop ended without run.finished");
  // The report is folded from the stored log alone; only now is the run marked finished.
  await finishInvestigation(store, runId, finished, result.report, result.events);
  unsent.push(finished);
  progress = undefined;
  send(true);
  announceChange(request.db, { kind: "runs", id: runId });
  return {
    runId,
    status: "finished",
    verdicts: ("loop" in result ? result.loop.verified : (result.agentic.state.verified ?? [])).map((v) => ({
      id: v.id,
      verdict: v.verdict,
    })),
  };
}

/**
 * The model as the report's provenance names it (the CLI's fields): a bundled
 * model by its folder in the repository, any other by where it was loaded from.
 */
export function investigationModelInfo(status: ModelStatus, bundledSource?: string): Record<string, unknown> {
  return {
    key: status.spec.key,
    family: status.spec.family,
    source: bundledSource ?? status.spec.source,
    layers: status.spec.layers,
    heads: status.spec.heads,
    capabilities: [...status.capabilities],
  };
}

/**
 * A stored investigation's report files, as `evalrx investigate` writes them:
 * the report folded from the latest attempt's log, bidi controls made
 * visible, `report.json` pretty-printed and the self-contained `report.html`.
 */
export async function investigationReportFiles(db: string, runId: string): Promise<{ json: string; html: string }> {
  const store = await IdbStore.open(db);
  try {
    const events = latestAttempt(await store.events(runId));
    if (!events.length) throw new Error(`no investigation '${runId}' with a log is stored in this browser`);
    const report = neutralizeBidi(buildReport(events));
    return { json: JSON.stringify(report, null, 2) + "\n", html: renderReportHtml(report) };
  } finally {
    await store.close();
  }
}
