import { proxy } from "comlink";
import type { Selection } from "../../../datasets/index.ts";
import type { DatasetRecord, StoredCase } from "../../../store/types.ts";
import type { HoldoutChoice, QueryResult, SelectionPreview } from "../../../../workers/data-view.ts";
import type { ImportService } from "../../app/imports.svelte.ts";
import type { StoreService } from "../../app/store.svelte.ts";
import { errorText } from "../../app/errors.ts";
import { isEmptyFilter, type CaseFilter, type CaseRowView, type Facets } from "./case-filter.ts";
import { datasetIdFromFile, datasetIdProblem, freeDatasetId } from "./names.ts";
import { ThumbCache } from "./thumbs.ts";

/**
 * The import form under a checked file: the dataset's name, and what to do
 * when a dataset of that name exists (never replace it: import under a free
 * name, or add only the ids it lacks).
 */
export class ImportForm {
  name = $state("");
  /** When the name is taken: a new dataset under a free name, or the new ids added to the one there. */
  mode = $state<"new" | "add">("new");
  readonly #store: StoreService;

  constructor(store: StoreService, path: string) {
    this.#store = store;
    this.name = datasetIdFromFile(path);
  }

  /** The stored dataset with this name, if any. */
  get existing(): DatasetRecord | undefined {
    return this.#store.datasets.find((d) => d.id === this.name);
  }

  get problem(): string | undefined {
    return datasetIdProblem(this.name);
  }

  /** The id the import writes to: the name, or a free one beside it when the name is taken and the mode is "new". */
  get target(): string {
    if (!this.existing || this.mode === "add") return this.name;
    return freeDatasetId(
      this.name,
      this.#store.datasets.map((d) => d.id),
    );
  }

  get writeMode(): "new" | "add" {
    return this.existing && this.mode === "add" ? "add" : "new";
  }
}

/** Rows fetched from the worker at a time, and how many such blocks stay in memory. */
const BLOCK = 100;
const KEEP_BLOCKS = 60;

/** What the selection preview asks: a `select()` and a `holdout` split, as the CLI would run them. */
export interface PreviewChoice {
  readonly splits: readonly string[];
  readonly tags: readonly string[];
  /** Empty: no sample. */
  readonly sample: string;
  readonly includeArchived: boolean;
  readonly holdout: HoldoutChoice;
}

/**
 * One dataset's page: its record, its cases through the data worker (a
 * window of rows at a time), the filters, the selected case, the
 * selection/holdout preview and thumbnails. Newest wins for every request the
 * user can re-trigger (a filter typed while the last one runs replaces it).
 */
export class DatasetView {
  readonly id: string;
  state = $state<"opening" | "open" | "missing" | "failed">("opening");
  failure = $state<string | undefined>();
  record = $state.raw<DatasetRecord | undefined>();
  /** Cases read by the worker so far, and whether all are. */
  loaded = $state(0);
  done = $state(false);
  filter = $state<CaseFilter>({});
  /** How many cases the filter keeps (undefined while it runs). */
  count = $state<number | undefined>();
  filterError = $state.raw<{ readonly message: string; readonly position: number } | undefined>();
  facets = $state.raw<Facets | undefined>();
  /** Fetched rows by block, for the current filter only. */
  blocks = $state.raw<ReadonlyMap<number, readonly CaseRowView[]>>(new Map());
  selected = $state<number | undefined>();
  detail = $state.raw<StoredCase | undefined>();
  preview = $state.raw<SelectionPreview | undefined>();
  previewError = $state<string | undefined>();
  readonly thumbs: ThumbCache;
  readonly #imports: ImportService;
  readonly #store: StoreService;
  #viewId: number | undefined;
  #generation = 0;
  #closed = false;
  /** Blocks asked for and not yet answered (plain: not state). */
  readonly #pending = new Set<number>();
  #filterTimer: ReturnType<typeof setTimeout> | undefined;
  #previewToken = 0;
  #detailToken = 0;

  constructor(imports: ImportService, store: StoreService, id: string) {
    this.#imports = imports;
    this.#store = store;
    this.id = id;
    this.thumbs = new ThumbCache(async (hash) => (await store.ready).getImage(hash));
  }

  /** Opens the dataset in the worker (the first page of cases first); again after it changed elsewhere. */
  async open(): Promise<void> {
    const previous = this.#viewId;
    this.#viewId = undefined;
    if (previous !== undefined) void this.#imports.call((api) => api.closeView(previous)).catch(() => undefined);
    this.state = "opening";
    // Load progress may arrive before the open call returns: it is matched to the view by its id.
    let mine: number | undefined;
    let early: { loaded: number; done: boolean } | undefined;
    const onLoaded = (loaded: number, done: boolean) => {
      if (mine === undefined) early = { loaded, done };
      else if (this.#viewId === mine) this.#progress(loaded, done);
    };
    try {
      const opened = await this.#imports.call((api) => api.openView(this.#store.db, this.id, proxy(onLoaded), BLOCK));
      if (this.#closed) {
        void this.#imports.call((api) => api.closeView(opened.viewId)).catch(() => undefined);
        return;
      }
      mine = opened.viewId;
      this.#viewId = opened.viewId;
      this.record = opened.record;
      this.state = "open";
      if (isEmptyFilter(this.filter)) {
        // No filter: the first rows came with the view; show them now (one round trip from the route change).
        this.#generation = opened.generation;
        this.#pending.clear();
        this.blocks = new Map([[0, opened.rows]]);
        this.count = opened.record.caseCount;
        this.filterError = undefined;
      } else await this.#query();
      this.#progress(early?.loaded ?? opened.loaded, early?.done ?? false);
    } catch (error) {
      const text = errorText(error);
      this.state = /there is no dataset/.test(text) ? "missing" : "failed";
      this.failure = text;
    }
  }

  #progress(loaded: number, done: boolean): void {
    this.loaded = loaded;
    this.done = done;
    if (!done) return;
    void this.#loadFacets();
    // The record's count may lag the cases (an import into it was cut short): trust the cases.
    if (isEmptyFilter(this.filter) && this.count !== undefined && this.count !== loaded) void this.#query();
  }

  async #loadFacets(): Promise<void> {
    const viewId = this.#viewId;
    if (viewId === undefined) return;
    const facets = await this.#imports.call((api) => api.facets(viewId)).catch(() => undefined);
    if (this.#viewId === viewId) this.facets = facets;
  }

  /** Changes the filters; text filters wait for a pause in typing. */
  setFilter(next: CaseFilter, typing = false): void {
    this.filter = next;
    clearTimeout(this.#filterTimer);
    if (typing) this.#filterTimer = setTimeout(() => void this.#query(), 200);
    else void this.#query();
  }

  async #query(): Promise<void> {
    const viewId = this.#viewId;
    if (viewId === undefined) return;
    this.count = undefined;
    const filter = $state.snapshot(this.filter) as CaseFilter;
    let result: QueryResult;
    try {
      result = await this.#imports.call<QueryResult>((api) => api.query(viewId, filter));
    } catch (error) {
      this.failure = errorText(error);
      return;
    }
    if ("stale" in result || this.#viewId !== viewId) return;
    if ("error" in result) {
      this.filterError = { message: result.error, position: result.position };
      this.count = 0;
      this.#generation = result.generation;
      this.blocks = new Map();
      return;
    }
    this.filterError = undefined;
    this.#generation = result.generation;
    this.#pending.clear();
    this.blocks = new Map();
    this.count = result.count;
    if (this.selected !== undefined && this.selected >= result.count) this.selected = undefined;
  }

  /**
   * Row `index` of the filtered cases, when fetched; otherwise asks the worker
   * for its block (after this render: state is never written while rendering).
   */
  row(index: number): CaseRowView | undefined {
    const block = Math.floor(index / BLOCK);
    const rows = this.blocks.get(block);
    if (rows) return rows[index - block * BLOCK];
    if (!this.#pending.has(block)) {
      this.#pending.add(block);
      queueMicrotask(() => void this.#fetch(block));
    }
    return undefined;
  }

  async #fetch(block: number): Promise<void> {
    const viewId = this.#viewId;
    const generation = this.#generation;
    if (viewId === undefined) return;
    const rows = await this.#imports
      .call((api) => api.rows(viewId, generation, block * BLOCK, (block + 1) * BLOCK))
      .catch(() => undefined);
    this.#pending.delete(block);
    if (!rows || this.#viewId !== viewId || this.#generation !== generation) return;
    const next = new Map(this.blocks);
    next.set(block, rows);
    // Keep the most recently fetched blocks only: scrolling through 100k rows holds a few thousand.
    for (const key of next.keys()) {
      if (next.size <= KEEP_BLOCKS) break;
      if (key !== block) next.delete(key);
    }
    this.blocks = next;
  }

  /** Selects row `index` of the filtered cases and reads its whole case for the detail. */
  async select(index: number): Promise<void> {
    this.selected = index;
    const token = ++this.#detailToken;
    const row = this.row(index) ?? (await this.#waitRow(index));
    const viewId = this.#viewId;
    if (!row || viewId === undefined) return;
    const full = await this.#imports.call((api) => api.caseAt(viewId, row.index)).catch(() => undefined);
    if (token === this.#detailToken) this.detail = full;
  }

  async #waitRow(index: number): Promise<CaseRowView | undefined> {
    await this.#fetch(Math.floor(index / BLOCK));
    return this.row(index);
  }

  closeDetail(): void {
    this.#detailToken++;
    this.detail = undefined;
  }

  /** Asks the worker what `select()` and `holdout` give on this dataset. */
  async runPreview(choice: PreviewChoice): Promise<void> {
    const viewId = this.#viewId;
    if (viewId === undefined) return;
    const token = ++this.#previewToken;
    const sample = choice.sample.trim();
    const selection: Selection = {
      ...(choice.splits.length && { split: [...choice.splits] }),
      ...(choice.tags.length && { tags: [...choice.tags] }),
      ...(sample !== "" && { sample: Number(sample) }),
      ...(choice.includeArchived && { includeArchived: true }),
    };
    try {
      const preview = await this.#imports.call((api) => api.preview(viewId, selection, { ...choice.holdout }));
      if (token !== this.#previewToken) return;
      this.preview = preview;
      this.previewError = undefined;
    } catch (error) {
      if (token !== this.#previewToken) return;
      this.preview = undefined;
      this.previewError = errorText(error);
    }
  }

  /** Deletes the dataset (its cases; images stay) and tells every tab. */
  async remove(): Promise<void> {
    const store = await this.#store.ready;
    await store.deleteDataset(this.id);
    await this.#store.changed({ kind: "datasets", id: this.id });
  }

  dispose(): void {
    this.#closed = true;
    clearTimeout(this.#filterTimer);
    const viewId = this.#viewId;
    this.#viewId = undefined;
    if (viewId !== undefined) void this.#imports.call((api) => api.closeView(viewId)).catch(() => undefined);
    this.thumbs.dispose();
  }
}
