import type {
  CalibrateJobBody,
  CompanionStatus,
  EvalJobBody,
  ExploreJobBody,
  InvestigateJobBody,
  JobMessage,
} from "../../node/companion/protocol.ts";
import { LessonDb } from "../../agent/lessons/lesson-db.browser.ts";
import { rankLessons, type Lesson } from "../../agent/lessons/lessons.ts";
import type { Calibration } from "../../evals/index.ts";
import { getSpec } from "../../models/specs/index.ts";
import {
  investigationData,
  newInvestigationId,
  writerLockId,
  type InvestigationPlan,
} from "../../../workers/investigate-job.ts";
import type { ItemRecord, RunLock, RunRecord } from "../../store/types.ts";
import type { IdbStore } from "../../store/idb.browser.ts";
import type { EvalConfig } from "../../evals/config.ts";
import type { StoreService } from "../app/store.svelte.ts";
import type { ModelChoice } from "../app/jobs.svelte.ts";
import { PAGE_CODE_VERSION } from "../app/jobs.svelte.ts";
import { errorText } from "../app/errors.ts";
import { applyStoreOp, CompanionClient, CompanionError, type Pairing } from "./client.ts";
import { PAIRING_KEY, readPairing } from "./pairing.ts";

/** Where an eval runs: in this page's model worker, or on the paired companion. */
export type RunOn = "page" | "companion";

/** How the companion looks from the page now. */
export type CompanionState =
  | { readonly kind: "unpaired" }
  | { readonly kind: "checking" }
  | { readonly kind: "reachable"; readonly status: CompanionStatus }
  | { readonly kind: "unreachable"; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

/** One eval, investigation, calibration or explore this page handed to the companion. */
export interface CompanionJobView {
  /** The run it writes (a calibration writes none: `calibrate:<job id>`). */
  readonly runId: string;
  readonly kind: "eval" | "investigate" | "calibrate" | "explore";
  /** What it is doing now (the latest progress line's stage). */
  readonly stage?: string;
  readonly jobId: string;
  readonly state: "running" | "finished" | "cancelled" | "failed";
  readonly done: number;
  readonly total: number;
  readonly error?: string;
}

/** The fields of a plain investigation plan (the companion's loop takes these and no others). */
const PLAIN_PLAN = new Set(["dataset", "select", "question", "maxTier", "holdout", "seed"]);

/** What a stored case is as a line of the dataset file the companion reads (the store's own fields left out). */
function caseLine(c: Record<string, unknown>): string {
  const { id, input, expected, tags, split, cluster, status, meta } = c;
  return JSON.stringify({ id, input, expected, tags, split, cluster, status, meta });
}

/** The most lessons sent with an investigation: the top ones for its model and dataset, as the page's loop ranks them. */
const LESSONS_SENT = 50;

/** The page's lessons that matter most for this run (its loop reads the top 10 of them; the rest serve recurring modes). */
async function topLessons(modelKey: string, dataset: { fingerprint: string; source: string }): Promise<Lesson[]> {
  const db = await LessonDb.open();
  try {
    const { lessons } = await db.read();
    const family = getSpec(modelKey)?.family;
    return rankLessons(lessons, {
      model: { key: modelKey, ...(family ? { family } : {}) },
      dataset,
      now: new Date(),
      top: LESSONS_SENT,
    }).map((r) => r.lesson);
  } finally {
    db.close();
  }
}

/** A run id unique in the page's store: `<base>-<stamp>-companion`. */
async function companionRunId(idb: IdbStore, base: string): Promise<string> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const first = `${base.replace(/[^\w.-]+/g, "-")}-${stamp}-companion`;
  let runId = first;
  for (let k = 2; await idb.getRun(runId); k++) runId = `${first}-${k}`;
  return runId;
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * The paired companion, as the page sees it: the pairing (kept in
 * localStorage), whether it answers and which version it is, and the evals
 * handed to it. A job's store writes are made again in IndexedDB as they
 * stream in, under the run's Web Lock, so the run is the page's own: the runs
 * list, the run page and Resume treat it as if the page had run it.
 */
export class CompanionService {
  pairing = $state.raw<Pairing | undefined>();
  state = $state.raw<CompanionState>({ kind: "unpaired" });
  jobs = $state.raw<readonly CompanionJobView[]>([]);
  readonly #storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | undefined;

  constructor(storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | undefined = globalThis.localStorage) {
    this.#storage = storage;
    this.pairing = readPairing(storage?.getItem(PAIRING_KEY) ?? null);
    if (this.pairing) void this.check();
  }

  get client(): CompanionClient | undefined {
    return this.pairing ? new CompanionClient(this.pairing) : undefined;
  }

  /** Remembers a pairing (from the companion's link) and checks it answers. */
  async pair(pairing: Pairing): Promise<CompanionState> {
    this.pairing = pairing;
    this.#storage?.setItem(PAIRING_KEY, JSON.stringify(pairing));
    return this.check();
  }

  unpair(): void {
    this.pairing = undefined;
    this.#storage?.removeItem(PAIRING_KEY);
    this.state = { kind: "unpaired" };
  }

  /** Asks the companion for its status. */
  async check(): Promise<CompanionState> {
    const client = this.client;
    if (!client) return (this.state = { kind: "unpaired" });
    this.state = { kind: "checking" };
    try {
      const status = await client.status();
      if (status.name !== "evalrx-companion")
        return (this.state = { kind: "refused", reason: `${client.pairing.url} is not an evalrx companion` });
      return (this.state = { kind: "reachable", status });
    } catch (error) {
      const reason = errorText(error);
      return (this.state =
        error instanceof CompanionError && error.status > 0
          ? { kind: "refused", reason }
          : { kind: "unreachable", reason });
    }
  }

  job(runId: string): CompanionJobView | undefined {
    return this.jobs.find((j) => j.runId === runId);
  }

  #upsert(job: CompanionJobView): void {
    this.jobs = this.job(job.runId) ? this.jobs.map((j) => (j.runId === job.runId ? job : j)) : [...this.jobs, job];
  }

  /**
   * Hands an eval to the companion: the stored dataset's cases and images go
   * with it, the run id is chosen here, and the run's writes are made in
   * IndexedDB as they arrive. Resolves with the run id once the run exists in
   * the page's store; the job goes on in the background.
   */
  async startEval(config: EvalConfig, model: ModelChoice, store: StoreService): Promise<string> {
    const client = this.client;
    if (!client)
      throw new Error("no companion is paired: open the link 'evalrx companion' printed, or run on this page");
    const idb = await store.ready;
    const dataset = await idb.getDataset(config.dataset);
    if (!dataset) throw new Error(`the eval names dataset '${config.dataset}', which is not stored in this browser`);
    const cases = (await idb.cases(dataset.id)).filter((c) => c.status === "active");
    const images: Record<string, string> = {};
    for (const c of cases) {
      const ref = c.input.image;
      if (ref?.startsWith("sha256:") && !(ref in images)) {
        const image = await idb.getImage(ref);
        if (!image) throw new Error(`image ${ref} of case '${c.id}' is not in this browser's store`);
        images[ref] = base64(image.bytes);
      }
    }
    const runId = await companionRunId(idb, config.name ?? dataset.id);
    const key = model.source.kind === "bundled" ? model.source.key : config.model;
    const body: EvalJobBody = {
      kind: "eval",
      config: { ...config, model: key },
      cases: cases.map((c) => caseLine(c as unknown as Record<string, unknown>)).join("\n"),
      images,
      modelSource: model,
      runId,
      codeVersion: PAGE_CODE_VERSION,
    };
    return this.#hand(client, body, idb, store, await idb.lockRun(runId));
  }

  /**
   * Hands an investigation to the companion: the plan's cases are chosen
   * here, as the page's own job chooses them (the selection, in import
   * order, cases with unusable images left out), sent with their images and
   * fingerprint, and the investigation's writes (its log, its label, probe
   * and repair runs, its report) are made in IndexedDB as they arrive, under
   * the investigation's writer lock, so the investigation page follows it
   * live and its Resume goes on from it in the page. Resolves with the run id
   * once the run exists here.
   */
  async startInvestigation(plan: InvestigationPlan, model: ModelChoice, store: StoreService): Promise<string> {
    const client = this.client;
    if (!client)
      throw new Error("no companion is paired: open the link 'evalrx companion' printed, or run on this page");
    if (model.source.kind !== "bundled")
      throw new Error(
        "the companion runs bundled models (and folders under its --models); this model was loaded into the page: run the investigation on this page",
      );
    // The companion runs the plain loop M1→M5: a plan asking for more (an agentic loop, a probe search) stays here.
    const beyond = Object.entries(plan)
      .filter(([k, v]) => !PLAIN_PLAN.has(k) && v !== undefined && v !== false)
      .map(([k]) => k);
    if (beyond.length)
      throw new Error(
        `the companion runs the plain loop M1→M5; ${beyond.join(", ")} run${beyond.length === 1 ? "s" : ""} on this page only`,
      );
    const idb = await store.ready;
    const data = await investigationData(idb, plan);
    const images: Record<string, string> = {};
    for (const c of data.cases) {
      const ref = c.input.image;
      if (ref?.startsWith("sha256:") && !(ref in images)) images[ref] = base64(await data.images(ref));
    }
    const runId = await newInvestigationId(idb, data.fingerprint, plan.seed);
    const lessons = await topLessons(model.source.key, { fingerprint: data.fingerprint, source: data.source });
    const body: InvestigateJobBody = {
      kind: "investigate",
      plan,
      model: model.source.key,
      cases: data.cases.map((c) => JSON.stringify(c)).join("\n"),
      fingerprint: data.fingerprint,
      source: data.source,
      ...(data.sampled ? { sampled: data.sampled } : {}),
      images,
      modelSource: model,
      runId,
      codeVersion: PAGE_CODE_VERSION,
      ...(lessons.length ? { lessons } : {}),
    };
    return this.#hand(client, body, idb, store, await idb.lockRun(writerLockId(runId)));
  }

  /**
   * Hands `evalrx explore` over a stored dataset (an eval log: its cases carry
   * a pass/fail label and columns) to the companion: M2–M4, no model. The
   * report's run (kind `explore`: its log and its report) is written in
   * IndexedDB as it arrives, so the Reports page opens it as one made here.
   * Resolves with the run id once the run exists here.
   */
  async startExplore(
    datasetId: string,
    options: { question?: string; holdout?: number; seed?: number },
    store: StoreService,
  ): Promise<string> {
    const client = this.client;
    if (!client)
      throw new Error("no companion is paired: open the link 'evalrx companion' printed on the Companion page");
    const idb = await store.ready;
    const dataset = await idb.getDataset(datasetId);
    if (!dataset) throw new Error(`dataset '${datasetId}' is not stored in this browser`);
    const cases = (await idb.cases(dataset.id)).filter((c) => c.status === "active");
    const labelled = cases.filter((c) => c.label !== undefined).length;
    if (labelled === 0)
      throw new Error(
        `dataset '${dataset.id}' has no pass/fail label (import an eval log: a file with a passed/correct column, an Inspect or lm-eval log); explore explains failures it is told about`,
      );
    const runId = await companionRunId(idb, `explore-${dataset.id}`);
    const body: ExploreJobBody = {
      kind: "explore",
      cases: cases
        .map((c) => {
          const { id, input, expected, tags, split, cluster, status, meta, label } = c;
          return JSON.stringify({ id, input, expected, tags, split, cluster, status, meta, label });
        })
        .join("\n"),
      source: dataset.source ?? dataset.name,
      ...(options.question?.trim() ? { question: options.question.trim() } : {}),
      ...(options.holdout !== undefined ? { holdout: options.holdout } : {}),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      runId,
      codeVersion: PAGE_CODE_VERSION,
    };
    return this.#hand(client, body, idb, store, await idb.lockRun(runId));
  }

  /**
   * The Compare page's A/A calibration on the companion: the chosen runs go
   * with their items, the companion runs the same `calibrate`, and its
   * answer is what the page's stats worker would have answered (nothing is
   * stored, there or here). `signal` cancels it on the companion.
   */
  async calibrate(
    runIds: readonly string[],
    options: CalibrateJobBody["options"],
    store: StoreService,
    onProgress: (p: { step: string; done: number; total: number }) => void,
    signal?: AbortSignal,
  ): Promise<Calibration> {
    const client = this.client;
    if (!client) throw new Error("no companion is paired: calibrate on this page, or pair one on the Companion page");
    const idb = await store.ready;
    const runs: { run: RunRecord; items: ItemRecord[] }[] = [];
    for (const [i, id] of runIds.entries()) {
      onProgress({ step: `reading run ${id}`, done: i, total: runIds.length + 1 });
      const run = await idb.getRun(id);
      if (!run) throw new Error(`no run '${id}' in this browser's store (it may have been deleted); pick another run`);
      runs.push({ run, items: await idb.items(id) });
    }
    signal?.throwIfAborted();
    const accepted = await client.start({ kind: "calibrate", runs, ...(options ? { options } : {}) });
    const key = `calibrate:${accepted.id}`;
    this.#upsert({ runId: key, kind: "calibrate", jobId: accepted.id, state: "running", done: 0, total: 0 });
    const stop = () => void client.cancel(accepted.id).catch(() => undefined);
    signal?.addEventListener("abort", stop, { once: true });
    try {
      for await (const m of client.messages(accepted.id) as AsyncGenerator<JobMessage>) {
        if (m.type === "progress") {
          onProgress({ step: `${m.stage} (on the companion)`, done: m.done, total: m.total });
          this.#upsert({ ...this.job(key)!, stage: m.stage, done: m.done, total: m.total });
        } else if (m.type === "end") {
          this.#upsert({ ...this.job(key)!, state: m.state, ...(m.error !== undefined ? { error: m.error } : {}) });
          if (m.state === "cancelled" || signal?.aborted)
            throw Object.assign(new Error("the calibration was cancelled on the companion"), {
              name: "CancelledError",
            });
          if (m.state !== "finished" || m.result === undefined)
            throw new Error(m.error ?? "the companion's calibration ended without a result");
          return m.result as Calibration;
        }
      }
      throw new Error("the companion's stream of the calibration ended before its result");
    } finally {
      signal?.removeEventListener("abort", stop);
    }
  }

  /**
   * Starts `body` on the companion and follows its stream in the background,
   * making each store write in IndexedDB while `lock` is held; resolves once
   * the job's run exists here, and lets the lock go when the stream ends.
   */
  async #hand(
    client: CompanionClient,
    body: EvalJobBody | InvestigateJobBody | ExploreJobBody,
    idb: IdbStore,
    store: StoreService,
    lock: RunLock,
  ): Promise<string> {
    const runId = body.runId!;
    let accepted;
    try {
      accepted = await client.start(body);
    } catch (error) {
      await lock.release();
      throw error;
    }
    this.#upsert({ runId, kind: body.kind, jobId: accepted.id, state: "running", done: 0, total: 0 });
    let created!: () => void;
    let failedEarly!: (e: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => {
      created = resolve;
      failedEarly = reject;
    });
    let exists = false;
    void (async () => {
      let lastAnnounce = 0;
      // Other screens read the run again at most twice a second while its items and events stream in.
      const announce = (force = false) => {
        if (!force && Date.now() - lastAnnounce < 500) return;
        lastAnnounce = Date.now();
        void store.changed({ kind: "runs", id: runId });
      };
      try {
        for await (const m of client.messages(accepted.id) as AsyncGenerator<JobMessage>) {
          if (m.type === "store") {
            await applyStoreOp(idb, m.write);
            if (m.write.op === "createRun" && m.write.run.id === runId) {
              exists = true;
              announce(true);
              created();
            }
            // A status change (finished, cancelled) shows at once on every screen.
            if (m.write.op === "updateRun" && m.write.id === runId) announce(true);
            if (m.write.op === "appendItems" && m.write.runId === runId) {
              const p = m.write.progress;
              this.#upsert({ ...this.job(runId)!, done: p.done, total: p.total });
            }
            if (m.write.op === "appendItems" || m.write.op === "appendEvents") announce();
          } else if (m.type === "progress") {
            this.#upsert({ ...this.job(runId)!, stage: m.stage, done: m.done, total: m.total });
          } else if (m.type === "lessons") {
            // What the investigation learned joins the page's lessons, as the page's own loop appends them.
            const db = await LessonDb.open();
            try {
              await db.append(m.lessons);
            } finally {
              db.close();
            }
          } else {
            this.#upsert({
              ...this.job(runId)!,
              state: m.state,
              ...(m.error !== undefined ? { error: m.error } : {}),
            });
            if (!exists)
              failedEarly(new Error(m.error ?? `the companion's job ended (${m.state}) before the run began`));
          }
        }
      } catch (error) {
        this.#upsert({ ...this.job(runId)!, state: "failed", error: errorText(error) });
        if (!exists) failedEarly(error);
      } finally {
        await lock.release();
        void store.changed({ kind: "runs", id: runId });
      }
    })();
    await ready;
    return runId;
  }

  /** Stops a job the companion runs for this page (what it judged is kept here, and can be resumed). */
  async cancel(runId: string): Promise<void> {
    const job = this.job(runId);
    if (!job || !this.client) return;
    await this.client.cancel(job.jobId);
  }
}

let shared: CompanionService | undefined;

/** The page's one companion service (created on first use). */
export function companionService(): CompanionService {
  shared ??= new CompanionService();
  return shared;
}

/** What a job form offers the companion: its config and model, and where it shows starting and failure. */
export interface JobForm {
  readonly config: { config?: EvalConfig; error?: string };
  readonly modelChoice: { readonly choice: ModelChoice } | undefined;
  starting: boolean;
  failure: string | undefined;
}

/**
 * Starts a form's eval on the companion, as the form's own Start does in the
 * page: the form shows it starting, and the reason when it cannot.
 * Resolves with the run id, or undefined when it did not start.
 *
 * @example const id = await startOnCompanion(form, app.store); if (id) app.router.go({ page: "runs", id })
 */
export async function startOnCompanion(form: JobForm, store: StoreService): Promise<string | undefined> {
  const { config, error } = form.config;
  const option = form.modelChoice;
  if (!config || !option) {
    form.failure = error;
    return undefined;
  }
  form.starting = true;
  form.failure = undefined;
  try {
    return await companionService().startEval(config, option.choice, store);
  } catch (e) {
    form.failure = `the companion: ${errorText(e)}`;
    return undefined;
  } finally {
    form.starting = false;
  }
}

/** What the investigation form offers the companion: its plan and model, and where it shows starting and failure. */
export interface InvestigationForm {
  readonly plan: { plan?: InvestigationPlan; error?: string };
  readonly modelOptions: readonly { readonly value: string; readonly choice: ModelChoice }[];
  readonly model: string;
  starting: boolean;
  failure: string | undefined;
}

/**
 * Starts the form's investigation on the companion, as the form's own Start
 * does in the page. Resolves with the run id, or undefined when it did not start.
 *
 * @example const id = await startInvestigationOnCompanion(form, app.store); if (id) app.router.go(investigateRoute(id))
 */
export async function startInvestigationOnCompanion(
  form: InvestigationForm,
  store: StoreService,
): Promise<string | undefined> {
  const { plan, error } = form.plan;
  const option = form.modelOptions.find((o) => o.value === form.model);
  if (!plan || !option) {
    form.failure = error ?? "model: choose a model";
    return undefined;
  }
  form.starting = true;
  form.failure = undefined;
  try {
    return await companionService().startInvestigation(plan, option.choice, store);
  } catch (e) {
    form.failure = `the companion: ${errorText(e)}`;
    return undefined;
  } finally {
    form.starting = false;
  }
}
