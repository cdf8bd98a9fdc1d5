import { proxy } from "comlink";
import type { EvalJobProgress, EvalJobRequest, EvalJobResult } from "../../../workers/eval-job.ts";
import type {
  InvestigateJobRequest,
  InvestigateJobResult,
  InvestigationPlan,
  InvestigationProgress,
  InvestigationUpdate,
} from "../../../workers/investigate-job.ts";
import type { ModelSource, WorkerLoadOptions } from "../../../workers/model.worker.ts";
import type { RunEvent } from "../../agent/events.ts";
import type { EvalConfig } from "../../evals/config.ts";
import type { RunRecord } from "../../store/types.ts";
import { errorText, isCancellation } from "./errors.ts";
import type { ModelService } from "./model.svelte.ts";
import type { StoreService } from "./store.svelte.ts";

/** One long job of this tab, as its screens show it. */
export interface JobView {
  readonly runId: string;
  readonly kind: "eval" | "investigation";
  readonly state: "running" | "finished" | "cancelled" | "failed";
  readonly done: number;
  readonly total: number;
  /** Items per second judged by this tab since the job (re)started; undefined until measurable. */
  readonly rate?: number;
  /** Estimated time left in ms. */
  readonly etaMs?: number;
  readonly error?: string;
}

/** An investigation this tab runs, live: its attempt's events so far and what it is judging now. */
export interface InvestigationLive {
  readonly runId: string;
  readonly events: readonly RunEvent[];
  readonly progress?: InvestigationProgress;
}

/** Where a page eval config's model comes from, as kept in the run so a reload can resume it. */
export interface ModelChoice {
  readonly source: ModelSource;
  readonly backend?: WorkerLoadOptions["backend"];
}

/** The code version recorded in runs made in the page. */
export const PAGE_CODE_VERSION = `${__EVALRX_VERSION__}+page`;

/**
 * How many copies of the model page evals and investigations run on (`EvalJobRequest.copies`,
 * `InvestigateJobRequest.copies`; unset: `DEFAULT_EVAL_COPIES`, `DEFAULT_INVESTIGATION_COPIES`): an internal switch
 * for `npm run bench:app`, which measures one copy beside two (localStorage "evalrx:model-copies" = "1" or "2").
 * Unset for every user.
 *
 * @example localStorage.setItem("evalrx:model-copies", "2"); modelCopies() // → 2
 */
function modelCopies(): 1 | 2 | undefined {
  try {
    const value = globalThis.localStorage?.getItem("evalrx:model-copies");
    return value === "1" ? 1 : value === "2" ? 2 : undefined;
  } catch {
    return undefined; // storage blocked: the default
  }
}

/**
 * This tab's long jobs: evals run inside the model worker (which owns the
 * model and writes each judged item to IndexedDB itself), reported back as
 * progress at most once per frame. A job can be cancelled (what was judged is
 * kept) and an interrupted run — a reload, a closed tab — resumed from its
 * first unjudged item.
 */
export class JobService {
  jobs = $state.raw<readonly JobView[]>([]);
  /** This tab's investigations by run id: their events, replaced whole once per frame. */
  investigations = $state.raw<ReadonlyMap<string, InvestigationLive>>(new Map());
  readonly #store: StoreService;
  readonly #models: ModelService;
  /** Latest progress per run, applied to `jobs` once per animation frame (plain maps: not state themselves). */
  readonly #pending = new Map<string, Partial<JobView>>();
  readonly #started = new Map<string, { at: number; done: number }>();
  #frame = 0;
  /** Investigation updates not yet applied (events in order, the latest progress). */
  readonly #pendingInvestigations = new Map<string, { events: RunEvent[]; progress?: InvestigationProgress }>();

  constructor(store: StoreService, models: ModelService) {
    this.#store = store;
    this.#models = models;
  }

  /** Jobs still running. */
  get active(): readonly JobView[] {
    return this.jobs.filter((j) => j.state === "running");
  }

  /** This tab's job for `runId`, if any. */
  job(runId: string): JobView | undefined {
    return this.jobs.find((j) => j.runId === runId);
  }

  /**
   * Starts an eval (`config` in the CLI's format, `dataset` naming a stored
   * dataset, `model` the model's key) and resolves with the new run's id as
   * soon as the run is created; the job goes on in the worker.
   */
  async startEval(config: EvalConfig, model: ModelChoice): Promise<string> {
    return this.#run({ config, model });
  }

  /** Resumes an interrupted eval run from its first unjudged item, with the model and config it was started with. */
  async resume(run: RunRecord): Promise<string> {
    const page = (run.config as { page?: { config?: EvalConfig; modelSource?: ModelChoice } }).page;
    if (!page?.config || !page.modelSource)
      throw new Error(
        `run '${run.id}' was not started in the page (it has no page config); resume it where it was started, e.g. evalrx eval <config> --resume ${run.id}`,
      );
    return this.#run({ config: page.config, model: page.modelSource, resume: run.id });
  }

  /** Stops a running eval; its judged items stay and it can be resumed. */
  async cancel(runId: string): Promise<void> {
    await this.#models.client.call((api) => api.cancelEval(runId));
  }

  /** This tab's live investigation `runId`, if any. */
  investigation(runId: string): InvestigationLive | undefined {
    return this.investigations.get(runId);
  }

  /**
   * Starts an investigation (M1→M5) of `model` inside the model worker and
   * resolves with its run id as soon as its first event is logged; the loop
   * goes on in the worker.
   */
  async startInvestigation(plan: InvestigationPlan, model: ModelChoice): Promise<string> {
    return this.#investigate({ model, plan });
  }

  /**
   * Resumes an interrupted investigation with the model and plan it was
   * started with (the CLI's `--resume`: stored labels, probes and repair runs
   * are read back, never judged again).
   */
  async resumeInvestigation(run: RunRecord): Promise<string> {
    const page = (run.config as { page?: { modelSource?: ModelChoice } }).page;
    if (!page?.modelSource)
      throw new Error(
        `investigation '${run.id}' was not started in the page (it keeps no model source); resume it where it was started (evalrx investigate --resume)`,
      );
    return this.#investigate({ model: page.modelSource, resume: run.id });
  }

  /** Stops a running investigation; what it stored stays, and it can be resumed. */
  async cancelInvestigation(runId: string): Promise<void> {
    await this.#models.client.call((api) => api.cancelInvestigation(runId));
  }

  async #investigate(job: { model: ModelChoice; plan?: InvestigationPlan; resume?: string }): Promise<string> {
    await this.#models.ensure(job.model.source, job.model.backend !== undefined ? { backend: job.model.backend } : {});
    const copies = modelCopies();
    const request: InvestigateJobRequest = {
      db: this.#store.db,
      modelSource: job.model,
      codeVersion: PAGE_CODE_VERSION,
      ...(copies !== undefined ? { copies } : {}),
      ...(job.plan ? { plan: job.plan } : {}),
      ...(job.resume !== undefined ? { resume: job.resume } : {}),
    };
    return new Promise<string>((resolveId, reject) => {
      let runId: string | undefined;
      const onUpdate = (update: InvestigationUpdate) => {
        if (runId === undefined) {
          runId = update.runId;
          const investigations = new Map(this.investigations);
          investigations.set(runId, { runId, events: [] });
          this.investigations = investigations;
          this.#started.set(runId, { at: performance.now(), done: update.progress?.done ?? 0 });
          this.#upsert({ runId, kind: "investigation", state: "running", done: 0, total: 0 });
          resolveId(runId);
        }
        const pending = this.#pendingInvestigations.get(update.runId) ?? { events: [] };
        pending.events.push(...update.events);
        if (update.progress) {
          // A new piece of work (another store run) restarts the rate.
          const current = pending.progress?.run ?? this.investigations.get(update.runId)?.progress?.run;
          if (current !== update.progress.run)
            this.#started.set(update.runId, { at: performance.now(), done: update.progress.done });
          pending.progress = update.progress;
        }
        this.#pendingInvestigations.set(update.runId, pending);
        this.#queue(update.runId, update.progress ? { done: update.progress.done, total: update.progress.total } : {});
      };
      this.#models.client
        .call((api) => api.runInvestigation(request, proxy(onUpdate)))
        .then(
          (result: InvestigateJobResult) => {
            this.#flush();
            this.#upsert({ ...this.job(result.runId)!, runId: result.runId, state: "finished", etaMs: 0 });
            if (runId === undefined) resolveId(result.runId);
            void this.#store.changed({ kind: "runs", id: result.runId });
          },
          (error: unknown) => {
            this.#flush();
            if (runId === undefined) return reject(error);
            const state = isCancellation(error) ? "cancelled" : "failed";
            this.#upsert({ ...this.job(runId)!, state, error: errorText(error) });
            void this.#store.changed({ kind: "runs", id: runId });
          },
        );
    });
  }

  async #run(job: { config: EvalConfig; model: ModelChoice; resume?: string }): Promise<string> {
    const status = await this.#models.ensure(
      job.model.source,
      job.model.backend !== undefined ? { backend: job.model.backend } : {},
    );
    const config: EvalConfig = { ...job.config, model: status.spec.key };
    const copies = modelCopies();
    const request: EvalJobRequest = {
      db: this.#store.db,
      config,
      modelSource: job.model,
      codeVersion: PAGE_CODE_VERSION,
      ...(job.resume !== undefined ? { resume: job.resume } : {}),
      ...(copies !== undefined ? { copies } : {}),
    };
    return new Promise<string>((resolveId, reject) => {
      let runId: string | undefined;
      const onProgress = (p: EvalJobProgress) => {
        if (runId === undefined) {
          runId = p.runId;
          this.#started.set(runId, { at: performance.now(), done: p.done });
          this.#upsert({ runId, kind: "eval", state: "running", done: p.done, total: p.total });
          resolveId(runId);
        }
        this.#queue(p.runId, { done: p.done, total: p.total });
      };
      this.#models.client
        .call((api) => api.runEval(request, proxy(onProgress)))
        .then(
          (result: EvalJobResult) => {
            this.#flush();
            const state = result.status === "cancelled" ? "cancelled" : "finished";
            this.#upsert({ ...this.job(result.runId)!, runId: result.runId, state, etaMs: 0 });
            if (runId === undefined) resolveId(result.runId);
            void this.#store.changed({ kind: "runs", id: result.runId });
          },
          (error: unknown) => {
            this.#flush();
            if (runId === undefined) return reject(error);
            const state = isCancellation(error) ? "cancelled" : "failed";
            this.#upsert({ ...this.job(runId)!, state, error: errorText(error) });
            void this.#store.changed({ kind: "runs", id: runId });
          },
        );
    });
  }

  #queue(runId: string, change: Partial<JobView>): void {
    this.#pending.set(runId, { ...this.#pending.get(runId), ...change });
    this.#frame ||= requestAnimationFrame(() => this.#flush());
  }

  /** Applies the latest progress of every job in one state change (at most once per frame). */
  #flush(): void {
    if (this.#frame) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    if (this.#pendingInvestigations.size) {
      const investigations = new Map(this.investigations);
      for (const [runId, update] of this.#pendingInvestigations) {
        const live = investigations.get(runId) ?? { runId, events: [] };
        investigations.set(runId, {
          runId,
          events: update.events.length ? [...live.events, ...update.events] : live.events,
          ...(update.progress ? { progress: update.progress } : live.progress ? { progress: live.progress } : {}),
        });
      }
      this.investigations = investigations;
      this.#pendingInvestigations.clear();
    }
    if (this.#pending.size === 0) return;
    const now = performance.now();
    this.jobs = this.jobs.map((job) => {
      const change = this.#pending.get(job.runId);
      if (!change) return job;
      const next = { ...job, ...change };
      const start = this.#started.get(job.runId);
      if (start && now - start.at > 500 && next.done > start.done) {
        const rate = ((next.done - start.done) * 1000) / (now - start.at);
        return { ...next, rate, etaMs: ((next.total - next.done) / rate) * 1000 };
      }
      return next;
    });
    this.#pending.clear();
  }

  #upsert(job: JobView): void {
    this.jobs = this.job(job.runId) ? this.jobs.map((j) => (j.runId === job.runId ? job : j)) : [...this.jobs, job];
  }

  dispose(): void {
    if (this.#frame) cancelAnimationFrame(this.#frame);
  }
}
