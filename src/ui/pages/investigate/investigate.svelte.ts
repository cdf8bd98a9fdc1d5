import type { DatasetFacets } from "../../../../workers/run-tables.ts";
import { companionService } from "../../companion/companion.svelte.ts";
import { INVESTIGATION_KIND, latestAttempt, writerLockId } from "../../../../workers/investigate-job.ts";
import type { RunEvent } from "../../../agent/events.ts";
import { stageLine } from "../../../agent/progress.ts";
import type { RunHead } from "../../../store/heads.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import { href, type Route } from "../../app/routes.ts";
import type { InvestigationLive, ModelChoice } from "../../app/jobs.svelte.ts";
import {
  DEFAULT_INVESTIGATE_FIELDS,
  fieldText,
  investigationPlan,
  type InvestigateFields,
} from "./investigate-form.ts";
import { stageRail, type RunState, type StageView } from "./stages.ts";

/** A model the form offers. */
export interface ModelOption {
  readonly value: string;
  readonly label: string;
  readonly choice: ModelChoice;
}

/** The route this page answers: `#/investigate` (start one, the list) or `#/investigate/<id>` (one investigation). */
export type InvestigateRoute = { readonly page: "investigate"; readonly id?: string };

/**
 * The page's two routes as the frame's `Route` (routes.ts): this page and the
 * report viewer's `#/report/<id>`. Typed here, as the frame declares them, so
 * the page builds its links with `href()` alone.
 */
function frameRoute(route: InvestigateRoute | { readonly page: "report"; readonly id: string }): Route {
  return route as unknown as Route;
}

/**
 * The route of one investigation, or of the page itself (no id).
 *
 * @example href(investigateRoute("investigate-1")) // "#/investigate/investigate-1"
 */
export function investigateRoute(id?: string): Route {
  return frameRoute(id === undefined ? { page: "investigate" } : { page: "investigate", id });
}

/**
 * The report page of an investigation (`#/report/<id>`, the report viewer's route).
 *
 * @example reportHref("investigate-1") // "#/report/investigate-1"
 */
export function reportHref(runId: string): string {
  return href(frameRoute({ page: "report", id: runId }));
}

/** The stored investigations, newest first. */
export function investigations(runs: readonly RunHead[]): RunHead[] {
  return runs.filter((r) => r.kind === INVESTIGATION_KIND);
}

/**
 * The new-investigation form: the fields, the dataset's splits and counts
 * (read in the stats worker), the plan they make, and Start.
 */
export class InvestigateFormState {
  fields = $state<InvestigateFields>({ ...DEFAULT_INVESTIGATE_FIELDS });
  model = $state("bundled:tiny-vlm");
  facets = $state.raw<DatasetFacets | undefined>();
  facetsFailure = $state<string | undefined>();
  starting = $state(false);
  failure = $state<string | undefined>();
  #facetsToken = 0;
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  /** Bundled models, and the model loaded in the worker when it is another one. */
  get modelOptions(): readonly ModelOption[] {
    return this.#app.models.offered.map(({ value, label, source }) => ({ value, label, choice: { source } }));
  }

  /** The plan the form describes, or the reason it is not one yet. */
  get plan(): { plan?: ReturnType<typeof investigationPlan>; error?: string } {
    try {
      return { plan: investigationPlan(this.fields) };
    } catch (error) {
      return { error: errorText(error) };
    }
  }

  /** How many cases the selection gives (the sample caps it), once the facets are known. */
  get plannedCases(): number | undefined {
    const f = this.facets;
    if (!f) return undefined;
    let n = f.active;
    const split = fieldText(this.fields.split);
    if (split) n = f.splits.find(([s]) => s === split)?.[1] ?? 0;
    const sample = Number(fieldText(this.fields.sample));
    if (fieldText(this.fields.sample) && Number.isInteger(sample) && sample > 0) n = Math.min(n, sample);
    return n;
  }

  chooseDataset(id: string): void {
    this.fields.dataset = id;
    this.fields.split = "";
    this.fields.tags = "";
    this.facets = undefined;
    this.facetsFailure = undefined;
    const token = ++this.#facetsToken;
    this.#app.stats.api.datasetFacets(this.#app.store.db, id).then(
      (facets) => {
        if (token === this.#facetsToken) this.facets = facets;
      },
      (error: unknown) => {
        if (token === this.#facetsToken) this.facetsFailure = errorText(error);
      },
    );
  }

  /**
   * Loads the chosen model while the form is being filled in, so that Start begins with it loaded: only a bundled
   * model (nothing to download), and only when the worker holds no model, loads none and has not died (never
   * replacing a model another page loaded). Start waits for this load rather than starting another; a failed one
   * is tried again by Start, which shows the error.
   */
  preload(): void {
    const models = this.#app.models;
    const option = this.modelOptions.find((o) => o.value === this.model);
    if (!option || option.choice.source.kind !== "bundled") return;
    if (models.status || models.loading || models.died) return;
    void models.ensure(option.choice.source).catch(() => undefined);
  }

  /** Starts the investigation; resolves with its run id (the loop goes on in the model worker). */
  async start(): Promise<string | undefined> {
    const { plan, error } = this.plan;
    const option = this.modelOptions.find((o) => o.value === this.model);
    if (!plan || !option) {
      this.failure = error ?? "model: choose a model";
      return undefined;
    }
    this.starting = true;
    this.failure = undefined;
    try {
      return await this.#app.jobs.startInvestigation(plan, option.choice);
    } catch (e) {
      this.failure = errorText(e);
      return undefined;
    } finally {
      this.starting = false;
    }
  }
}

/**
 * One investigation's screen: its events (live from this tab's job, or read
 * from the store — after a reload, or while another tab runs it), where it
 * stands, and Cancel / Resume / the report's files.
 */
export class InvestigationState {
  readonly runId: string;
  /** The stored log's latest attempt (when this tab is not running the investigation). */
  stored = $state.raw<readonly RunEvent[] | undefined>();
  /** True once `stored` was read while this tab ran no job of this investigation (so it holds the job's every event). */
  settled = $state(false);
  storedFailure = $state<string | undefined>();
  /** Who holds the writer lock when this tab does not ("" when nobody: interrupted). */
  holder = $state<string | undefined>();
  actionFailure = $state<string | undefined>();
  resuming = $state(false);
  exporting = $state<"json" | "html" | "events" | undefined>();
  #reading = 0;
  readonly #app: AppServices;

  constructor(app: AppServices, runId: string) {
    this.#app = app;
    this.runId = runId;
  }

  get head(): RunHead | undefined {
    return this.#app.store.runs.find((r) => r.id === this.runId);
  }

  get live(): InvestigationLive | undefined {
    return this.#app.jobs.investigation(this.runId);
  }

  get job() {
    return this.#app.jobs.job(this.runId);
  }

  /**
   * The events shown: this tab's live job's while it runs and until the
   * stored log has been read after it ended (a read made while it ran may
   * lack its last events), else the stored log's latest attempt.
   */
  get events(): readonly RunEvent[] {
    const live = this.live;
    if (live && (this.job?.state === "running" || !this.settled)) return live.events;
    return this.stored ?? live?.events ?? [];
  }

  /** Where the run stands: this tab's job first, then the store's status and the writer lock. */
  get state(): RunState | undefined {
    const job = this.job;
    if (job?.state === "running") return "running";
    const status = this.head?.status;
    if (status === undefined) return job?.state === "finished" ? "finished" : job ? job.state : undefined;
    if (status !== "running") return status;
    if (this.holder === undefined) return "running";
    return this.holder === "" ? "interrupted" : "running";
  }

  get rail(): StageView[] {
    return stageRail(this.events, this.state ?? "running");
  }

  /** The CLI's progress lines for the events so far. */
  get lines(): string[] {
    const out: string[] = [];
    for (const e of this.events) {
      const line = stageLine(e);
      if (line) out.push(line);
    }
    return out;
  }

  /**
   * Reads the stored log again (newest request wins), and who writes the run
   * now. While this tab runs the investigation its live events are shown and
   * nothing is read.
   */
  async refresh(): Promise<void> {
    const token = ++this.#reading;
    if (this.job?.state === "running") {
      this.settled = false;
      return;
    }
    try {
      const store = await this.#app.store.ready;
      // This tab's job has finished and its events end with run.finished: they are the stored latest attempt
      // already. Kept as they are (the same objects), the panels built from them are not built again, and the
      // log is not read and cloned on this thread at the end of the run.
      const live = this.live?.events;
      const complete = this.job?.state === "finished" && live?.at(-1)?.type === "run.finished";
      const events = complete ? live! : latestAttempt(await store.events(this.runId));
      if (token !== this.#reading) return;
      this.stored = events;
      this.settled = true;
      this.storedFailure = undefined;
      if (this.head?.status !== "running") this.holder = undefined;
      else {
        const holder = (await store.runLockHolder(writerLockId(this.runId))) ?? "";
        if (token === this.#reading) this.holder = holder;
      }
    } catch (error) {
      if (token === this.#reading) this.storedFailure = errorText(error);
    }
  }

  /**
   * Asks again who holds the run's writer lock, without reading the log: a reloaded or closed tab's worker lets
   * go of the lock a moment after the new page first looks, and nothing is written to the store meanwhile.
   */
  async recheckHolder(): Promise<void> {
    if (this.head?.status !== "running" || this.job?.state === "running") return;
    const store = await this.#app.store.ready;
    const holder = (await store.runLockHolder(writerLockId(this.runId))) ?? "";
    if (this.head?.status === "running") this.holder = holder;
  }

  async cancel(): Promise<void> {
    this.actionFailure = undefined;
    try {
      // An investigation this page handed to the companion is cancelled there (issue 16).
      const companion = companionService();
      if (companion.job(this.runId)?.state === "running") await companion.cancel(this.runId);
      else await this.#app.jobs.cancelInvestigation(this.runId);
    } catch (error) {
      this.actionFailure = errorText(error);
    }
  }

  async resume(): Promise<void> {
    this.actionFailure = undefined;
    const store = await this.#app.store.ready;
    const run = await store.getRun(this.runId);
    if (!run) {
      this.actionFailure = `investigation '${this.runId}' is not stored in this browser`;
      return;
    }
    this.resuming = true;
    try {
      await this.#app.jobs.resumeInvestigation(run);
    } catch (error) {
      this.actionFailure = errorText(error);
    } finally {
      this.resuming = false;
    }
  }

  /**
   * Downloads a file `evalrx investigate` writes: report.json or report.html
   * (made in the model worker, as the CLI writes them), or events.jsonl (the
   * stored log's latest attempt, one event a line).
   */
  async download(kind: "json" | "html" | "events"): Promise<void> {
    this.actionFailure = undefined;
    this.exporting = kind;
    try {
      let text: string;
      if (kind === "events") {
        const store = await this.#app.store.ready;
        const events = latestAttempt(await store.events(this.runId));
        if (!events.length) throw new Error(`investigation '${this.runId}' has no stored log in this browser`);
        text = events.map((e) => JSON.stringify(e) + "\n").join("");
      } else {
        const files = await this.#app.models.client.call((api) =>
          api.investigationReport(this.#app.store.db, this.runId),
        );
        text = kind === "json" ? files.json : files.html;
      }
      const type = kind === "html" ? "text/html" : kind === "json" ? "application/json" : "application/x-ndjson";
      const url = URL.createObjectURL(new Blob([text], { type }));
      const a = document.createElement("a");
      a.href = url;
      a.download = kind === "events" ? "events.jsonl" : `report.${kind}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (error) {
      this.actionFailure = errorText(error);
    } finally {
      this.exporting = undefined;
    }
  }
}
