import { proxy } from "comlink";
import type { JobProgress } from "../../../../workers/compare-jobs.ts";
import type { CaseOutputs, CompareJobResult, PowerJobResult } from "../../../../workers/stats-jobs.ts";
import type { Calibration } from "../../../evals/index.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText, isCancellation } from "../../app/errors.ts";
import type { Route } from "../../app/routes.ts";
import { comparableRuns, defaultPair, visibleCases, type ComparableRun } from "./compare-view.ts";
import { companionService, type RunOn } from "../../companion/companion.svelte.ts";

type CompareRoute = Extract<Route, { page: "compare" }>;

/** Case rows whose answers are asked of the worker at once. */
const OUTPUT_PAGE = 100;

/** A job the page runs in the stats worker: its result, progress and failure, newest request winning. */
class WorkerJob<T> {
  result = $state.raw<T | undefined>();
  progress = $state.raw<JobProgress | undefined>();
  failure = $state<string | undefined>();
  running = $state(false);
  #ticket = 0;
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  /** Starts `call` with a new ticket; an older call still running is superseded (its answer is dropped). */
  async run(call: (ticket: number, onProgress: (p: JobProgress) => void) => Promise<T>): Promise<void> {
    const ticket = this.#app.stats.ticket();
    this.#ticket = ticket;
    this.running = true;
    this.failure = undefined;
    this.progress = undefined;
    try {
      const result = await call(
        ticket,
        proxy((p: JobProgress) => {
          if (this.#ticket === ticket) this.progress = p;
        }),
      );
      if (this.#ticket !== ticket) return;
      this.result = result;
    } catch (error) {
      if (this.#ticket !== ticket || isCancellation(error)) return;
      this.result = undefined;
      this.failure = errorText(error);
    } finally {
      if (this.#ticket === ticket) {
        this.running = false;
        this.progress = undefined;
      }
    }
  }

  /** Forgets the result and drops any answer still on its way. */
  clear(): void {
    this.#ticket = -1;
    this.result = undefined;
    this.failure = undefined;
    this.running = false;
    this.progress = undefined;
  }
}

/**
 * The Compare page: two stored runs (baseline left), gated at a tolerance
 * kept in the URL, with everything computed in the stats worker — the
 * gate's verdict and tests, the 2×2, the cases sorted by regressions (their
 * answers fetched for the rows in view), an A/A calibration and the gate's power.
 */
export class CompareState {
  readonly compare: WorkerJob<CompareJobResult>;
  readonly calibration: WorkerJob<Calibration>;
  readonly power: WorkerJob<PowerJobResult>;
  /** Metrics that can fail the gate (the CLI's --metric; default the pass rate). */
  gated = $state<string[]>(["pass"]);
  diffOnly = $state(true);
  /** Answers of cases in view, by case id. */
  outputs = $state.raw<ReadonlyMap<string, CaseOutputs>>(new Map());
  /** Runs picked for the A/A calibration. */
  aaRuns = $state<string[]>([]);
  /** Where the calibration runs: this page's stats worker, or the paired companion. */
  calibrateOn = $state<RunOn>("page");
  /** Stops a calibration running on the companion. */
  #companionCalibration: AbortController | undefined;
  /** The drop the power panel asks about (a share). */
  drop = $state<number | undefined>();
  /** P(two trials of a case disagree) for the power panel's planning; taken from a calibration when there is one. */
  flipRate = $state<number | undefined>();
  /** Pages of visible rows whose answers were asked for, and a counter that drops answers to older asks. */
  #asked = new Set<number>();
  /** Rows of the case table: indices into the result's case columns (computed once per result and toggle). */
  readonly visible = $derived.by(() => {
    const cases = this.compare.result?.cases;
    return cases ? visibleCases(cases, this.diffOnly) : new Int32Array(0);
  });
  #generation = 0;
  readonly #app: AppServices;
  readonly #route: () => CompareRoute;

  constructor(app: AppServices, route: () => CompareRoute) {
    this.#app = app;
    this.#route = route;
    this.compare = new WorkerJob(app);
    this.calibration = new WorkerJob(app);
    this.power = new WorkerJob(app);
  }

  /** Eval runs in this browser, newest first. */
  get runs(): ComparableRun[] {
    return comparableRuns(this.#app.store.runs);
  }

  get baselineId(): string | undefined {
    return this.#route().baseline;
  }

  get candidateId(): string | undefined {
    return this.#route().candidate;
  }

  /** The tolerance in force: the URL's, else the one in Settings. */
  get tolerance(): number {
    return this.#route().tolerance ?? this.#app.settings.tolerance;
  }

  get alpha(): number {
    return this.#app.settings.alpha;
  }

  get baseline(): ComparableRun | undefined {
    return this.runs.find((r) => r.id === this.baselineId);
  }

  get candidate(): ComparableRun | undefined {
    return this.runs.find((r) => r.id === this.candidateId);
  }

  /** Why the pair in the URL cannot be compared yet (a missing run, the same run twice), if it cannot. */
  get pairProblem(): string | undefined {
    if (this.#app.store.state !== "open") return undefined;
    const missing = [this.baselineId, this.candidateId].filter(
      (id) => id !== undefined && !this.runs.some((r) => r.id === id),
    );
    if (missing.length)
      return `${missing.map((id) => `'${id}'`).join(" and ")} ${missing.length === 1 ? "is" : "are"} not a stored eval run in this browser: pick another below, or import the run file on the Runs page.`;
    if (this.baselineId && this.baselineId === this.candidateId)
      return "The baseline and the candidate are the same run: pick two different runs.";
    return undefined;
  }

  get ready(): boolean {
    return !!this.baseline && !!this.candidate && this.pairProblem === undefined;
  }

  /** Opens the newest comparable pair when the URL names none. */
  pickDefault(): void {
    const route = this.#route();
    if (route.baseline !== undefined || route.candidate !== undefined) return;
    const pair = defaultPair(this.runs);
    if (pair) this.#app.router.replace({ ...route, ...pair });
  }

  choose(side: "baseline" | "candidate", id: string): void {
    this.#app.router.replace({ ...this.#route(), [side]: id || undefined });
  }

  swap(): void {
    const r = this.#route();
    this.#app.router.replace({ ...r, baseline: r.candidate, candidate: r.baseline });
  }

  setTolerance(tolerance: number): void {
    this.#app.router.replace({ ...this.#route(), tolerance });
  }

  toggleGated(metric: string, on: boolean): void {
    const next = on ? [...new Set([...this.gated, metric])] : this.gated.filter((m) => m !== metric);
    this.gated = next.length ? next : ["pass"];
  }

  /** Compares the pair in the worker (the newest request wins; the case answers are asked again). */
  refresh(): void {
    if (!this.ready) {
      this.compare.clear();
      return;
    }
    const { db } = this.#app.store;
    const [baseline, candidate] = [this.baselineId!, this.candidateId!];
    const options = { tolerance: this.tolerance, alpha: this.alpha, gated: [...this.gated] };
    void this.compare.run((ticket, onProgress) =>
      this.#app.stats.api.compareStored(db, baseline, candidate, options, ticket, onProgress),
    );
  }

  /** The answers of the case at row `index` of the visible rows, or undefined while they load (then asked for). */
  outputsAt(caseId: string, index: number): CaseOutputs | undefined {
    const kept = this.outputs.get(caseId);
    if (kept) return kept;
    const page = Math.floor(index / OUTPUT_PAGE);
    if (!this.#asked.has(page)) {
      this.#asked.add(page);
      const generation = this.#generation;
      // Asked while rendering: fetch after this render, never during it.
      queueMicrotask(() => void this.#loadOutputs(page, generation));
    }
    return undefined;
  }

  async #loadOutputs(page: number, generation: number): Promise<void> {
    const result = this.compare.result;
    if (!result) return;
    const rows = this.visible.subarray(page * OUTPUT_PAGE, (page + 1) * OUTPUT_PAGE);
    const ids = Array.from(rows, (i) => result.cases.ids[i]!);
    try {
      const got = await this.#app.stats.api.caseOutputsStored(
        this.#app.store.db,
        result.baseline.id,
        result.candidate.id,
        ids,
      );
      if (this.#generation !== generation) return;
      const next = new Map(this.outputs);
      for (const o of got) next.set(o.id, o);
      this.outputs = next;
    } catch {
      this.#asked.delete(page); // asked again when the rows are drawn next
    }
  }

  /** Forgets the case answers (the pair or the rows changed). */
  resetOutputs(): void {
    this.#generation++;
    this.#asked = new Set();
    this.outputs = new Map();
  }

  /** Runs that can join an A/A calibration with the baseline: runs of the same eval. */
  get aaChoices(): ComparableRun[] {
    const evalKey = this.baseline?.evalKey;
    return evalKey ? this.runs.filter((r) => r.evalKey === evalKey) : [];
  }

  toggleAa(id: string, on: boolean): void {
    this.aaRuns = on ? [...new Set([...this.aaRuns, id])] : this.aaRuns.filter((r) => r !== id);
  }

  calibrate(): void {
    const runs = this.aaRuns.filter((id) => this.aaChoices.some((r) => r.id === id));
    const { db } = this.#app.store;
    const options = { target: this.tolerance, alpha: this.alpha };
    this.#companionCalibration?.abort();
    const controller = (this.#companionCalibration = new AbortController());
    void this.calibration
      .run((ticket, onProgress) =>
        this.calibrateOn === "companion"
          ? companionService().calibrate(runs, options, this.#app.store, onProgress, controller.signal)
          : this.#app.stats.api.calibrateStored(db, runs, options, ticket, onProgress),
      )
      .then(() => {
        const flip = this.calibration.result?.flipRate;
        if (flip !== undefined && this.flipRate === undefined) this.flipRate = Math.min(0.5, flip);
      });
  }

  cancel(kind: "calibrate" | "power"): void {
    if (kind === "calibrate") this.#companionCalibration?.abort();
    void this.#app.stats.api.supersede(kind);
    (kind === "calibrate" ? this.calibration : this.power).clear();
  }

  /** The drop the power panel asks about: the one set, else twice the tolerance. */
  get powerDrop(): number {
    return this.drop ?? Math.min(0.99, 2 * this.tolerance);
  }

  computePower(): void {
    const baseline = this.baselineId;
    if (!baseline) return;
    const { db } = this.#app.store;
    const options = {
      drop: this.powerDrop,
      tolerance: this.tolerance,
      alpha: this.alpha,
      ...(this.flipRate !== undefined ? { flipRate: this.flipRate } : {}),
    };
    void this.power.run((ticket, onProgress) =>
      this.#app.stats.api.powerStored(db, baseline, options, ticket, onProgress),
    );
  }
}
