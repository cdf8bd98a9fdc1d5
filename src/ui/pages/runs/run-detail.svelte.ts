import type { CaseTablePage, RunCaseDetail } from "../../../../workers/run-tables.ts";
import type { CaseQuery, CaseRow } from "../../../evals/case-rows.ts";
import type { RunHead } from "../../../store/heads.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import { sameFacts } from "./table-facts.ts";

/** Rows per page asked of the worker. */
const PAGE = 200;

/**
 * One run's screen: its head (from the store's list), its case table read a
 * page at a time from the stats worker (which holds the run), the case shown
 * in detail, and who is writing it (this tab, another tab, or nobody: then it
 * was interrupted and can be resumed).
 */
export class RunDetailState {
  readonly runId: string;
  query = $state<CaseQuery>({ verdict: "all", search: "", sort: "position", descending: false });
  /** The latest table facts (counts, matched, summary) and the pages of rows loaded so far. */
  table = $state.raw<CaseTablePage | undefined>();
  pages = $state.raw<ReadonlyMap<number, readonly CaseRow[]>>(new Map());
  tableFailure = $state<string | undefined>();
  detail = $state.raw<RunCaseDetail | undefined>();
  detailFailure = $state<string | undefined>();
  image = $state<string | undefined>();
  /** Who holds the run's writer lock when it is not this tab ("" when nobody: interrupted). */
  holder = $state<string | undefined>();
  actionFailure = $state<string | undefined>();
  /** True from Resume until the job reports (the model may have to load first). */
  resuming = $state(false);
  #generation = 0;
  #loading = new Set<number>();
  #lastRefresh = 0;
  readonly #app: AppServices;

  constructor(app: AppServices, runId: string) {
    this.#app = app;
    this.runId = runId;
  }

  get head(): RunHead | undefined {
    return this.#app.store.runs.find((r) => r.id === this.runId);
  }

  get job() {
    return this.#app.jobs.job(this.runId);
  }

  /** Rows matching the query (known once the first page arrived). */
  get matched(): number {
    return this.table?.matched ?? 0;
  }

  /** The row at `index` of the matching rows, or undefined while its page loads (it is asked for). */
  row(index: number): CaseRow | undefined {
    const page = Math.floor(index / PAGE);
    const rows = this.pages.get(page);
    if (rows) return rows[index - page * PAGE];
    if (!this.#loading.has(page)) {
      this.#loading.add(page);
      // Asked for while rendering: load after this render, never during it.
      queueMicrotask(() => void this.#loadPage(page, this.#generation));
    }
    return undefined;
  }

  setQuery(change: Partial<CaseQuery>): void {
    this.query = { ...this.query, ...change };
    void this.reload();
  }

  /** Reads the table again from its first page (a new query, or the run moved on). */
  async reload(): Promise<void> {
    const generation = ++this.#generation;
    this.#loading = new Set([0]);
    this.#lastRefresh = performance.now();
    // A first page at once from the items alone, then the whole table (counts, filters) when the worker has it.
    if (await this.#loadPage(0, generation, true, true)) await this.#loadPage(0, generation, true);
  }

  /**
   * While a run is being judged, re-reads the table at most every 2 s: each
   * read is the whole run in the stats worker and a repaint of the table and
   * summary here, CPU the judging needs on a small machine.
   */
  refreshIfStale(): void {
    if (performance.now() - this.#lastRefresh < 2000) return;
    void this.reload();
  }

  /** Loads one page of rows; true when what came back was a partial first page. */
  async #loadPage(page: number, generation: number, reset = false, quick = false): Promise<boolean> {
    try {
      const result = await this.#app.stats.api.caseTable(
        this.#app.store.db,
        this.runId,
        $state.snapshot(this.query),
        page * PAGE,
        PAGE,
        { quick },
      );
      if (generation !== this.#generation) return false; // a newer query or refresh superseded this one
      // A page scrolled to brings the same facts again: keeping the table object spares the summary, its
      // figure and the filter counts a repaint on every page of a fast scroll.
      if (reset || !sameFacts(this.table, result)) this.table = result;
      const pages = new Map(reset ? [] : this.pages);
      pages.set(page, result.rows);
      this.pages = pages;
      this.tableFailure = undefined;
      return result.partial === true;
    } catch (error) {
      if (generation === this.#generation) this.tableFailure = errorText(error);
      return false;
    } finally {
      if (generation === this.#generation) this.#loading.delete(page);
    }
  }

  /** Loads one case in full (every trial and check), and its image from the store. */
  async openCase(caseId: string | undefined): Promise<void> {
    if (this.image) URL.revokeObjectURL(this.image);
    this.image = undefined;
    this.detail = undefined;
    this.detailFailure = undefined;
    if (caseId === undefined) return;
    try {
      const detail = await this.#app.stats.api.runCase(this.#app.store.db, this.runId, caseId);
      this.detail = detail;
      // A stored case names its image by content hash (`sha256:<hex>` or the bare hex), or carries a data URL.
      const ref = detail.stored?.input.image;
      if (ref?.startsWith("data:")) this.image = ref;
      else if (ref) {
        const store = await this.#app.store.ready;
        const image = await store.getImage(ref).catch(() => undefined);
        if (image && this.detail === detail)
          this.image = URL.createObjectURL(new Blob([image.bytes as BlobPart], { type: image.type }));
      }
    } catch (error) {
      this.detailFailure = errorText(error);
    }
  }

  /** Who writes this run now: checked against the lock manager (a running run nobody holds was interrupted). */
  async checkHolder(): Promise<void> {
    if (this.head?.status !== "running" || this.job?.state === "running") {
      this.holder = undefined;
      return;
    }
    const store = await this.#app.store.ready;
    this.holder = (await store.runLockHolder(this.runId)) ?? "";
  }

  async resume(): Promise<void> {
    this.actionFailure = undefined;
    const head = this.head;
    if (!head) return;
    this.resuming = true;
    try {
      await this.#app.jobs.resume(head);
    } catch (error) {
      this.actionFailure = errorText(error);
    } finally {
      this.resuming = false;
    }
  }

  async cancel(): Promise<void> {
    this.actionFailure = undefined;
    try {
      await this.#app.jobs.cancel(this.runId);
    } catch (error) {
      this.actionFailure = errorText(error);
    }
  }

  dispose(): void {
    if (this.image?.startsWith("blob:")) URL.revokeObjectURL(this.image);
  }
}
