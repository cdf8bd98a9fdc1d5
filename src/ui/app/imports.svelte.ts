import { proxy, wrap, type Remote } from "comlink";
import type { ColumnMapping, ImportFormat } from "../../datasets/index.ts";
import type { DataWorkerApi } from "../../../workers/data.worker.ts";
import type {
  CheckReport,
  DemoReport,
  ImportMode,
  ImportReport,
  ReadProgress,
  ReadRequest,
} from "../../../workers/data-import.ts";
import type { DroppedFile } from "../components/files.ts";
import { sortDropped } from "../pages/datasets/names.ts";
import { errorText, isCancellation } from "./errors.ts";
import type { StoreService } from "./store.svelte.ts";

/** How to read the dropped dataset: what the user chose over what was detected. */
export interface ReadChoices {
  readonly format?: ImportFormat;
  readonly mapping?: ColumnMapping;
  readonly delimiter?: string;
}

/** A dropped dataset being checked, or checked and waiting for the user to import it. */
export interface ImportDraft {
  readonly files: readonly DroppedFile[];
  /** Indices of the files that are datasets (the user picks one when there are several). */
  readonly candidates: readonly number[];
  /** Index of the file read. */
  readonly dataset: number;
  readonly choices: ReadChoices;
  /** Files dropped that are neither a dataset nor an image (ignored). */
  readonly ignored: number;
  readonly state: "checking" | "checked" | "failed";
  readonly progress?: ReadProgress;
  readonly report?: CheckReport;
  readonly error?: string;
}

/** The import under way (or the last one, until dismissed). */
export interface ImportJob {
  readonly datasetId: string;
  readonly mode: ImportMode;
  readonly path: string;
  readonly state: "running" | "finished" | "cancelled" | "failed";
  readonly rows: number;
  /** Rows in the file (from its check). */
  readonly total: number;
  /** Rows per second so far. */
  readonly rate?: number;
  readonly etaMs?: number;
  readonly report?: ImportReport;
  readonly error?: string;
}

/** Adding the demo datasets. */
export interface DemoJob {
  readonly state: "running" | "finished" | "failed";
  readonly file?: string;
  readonly rows: number;
  readonly total: number;
  readonly reports?: readonly DemoReport[];
  readonly error?: string;
}

/** Rows in the three demo files (`public/demo/`), for the progress bar. */
const DEMO_ROWS = 600 + 100 + 208;

/**
 * The page's one data worker and the imports it runs: a dropped file is
 * checked at once (its problems are listed before anything is stored), then
 * imported on the user's word, with progress (rows/s) and Cancel; the demo
 * datasets are one call (`addDemo`). The dataset page reads cases through
 * `call` too. State lives here, not in the page, so an import goes on (and
 * its draft stays) while the user looks at other pages.
 */
export class ImportService {
  draft = $state.raw<ImportDraft | undefined>();
  job = $state.raw<ImportJob | undefined>();
  demo = $state.raw<DemoJob | undefined>();
  readonly #store: StoreService;
  #worker: Worker | undefined;
  #api: Remote<DataWorkerApi> | undefined;
  #died: Promise<never> | undefined;
  #jobIds = 0;
  #checkJob = 0;
  #importJob = 0;

  constructor(store: StoreService) {
    this.#store = store;
  }

  /** Calls the data worker (started on first use); rejects instead of hanging if the worker dies. */
  async call<T>(fn: (api: Remote<DataWorkerApi>) => Promise<T>): Promise<T> {
    if (!this.#api) this.#start();
    return Promise.race([fn(this.#api!), this.#died!]);
  }

  #start(): void {
    const worker = new Worker(new URL("../../../workers/data.worker.ts", import.meta.url), { type: "module" });
    this.#worker = worker;
    this.#api = wrap<DataWorkerApi>(worker);
    this.#died = new Promise<never>((_, reject) => {
      const die = (reason: string) => {
        if (this.#worker !== worker) return;
        this.#worker = undefined;
        this.#api = undefined;
        worker.terminate();
        reject(new Error(`the data worker stopped: ${reason}. Try again (a fresh worker starts).`));
      };
      worker.addEventListener("error", (event) => {
        event.preventDefault();
        die(event.message || "an uncaught error (possibly out of memory)");
      });
      worker.addEventListener("messageerror", () => die("a message could not be read"));
    });
    this.#died.catch(() => undefined);
  }

  /**
   * Takes what the user dropped or picked: finds the dataset among the files
   * (the rest may be its images) and checks it at once.
   */
  drop(files: readonly DroppedFile[]): void {
    const { data, images } = sortDropped(files);
    const base = { files, candidates: data, ignored: files.length - data.length - images.length, choices: {} };
    if (!data.length) {
      this.#cancelCheck();
      const names = files
        .slice(0, 3)
        .map((f) => f.path)
        .join(", ");
      this.draft = {
        ...base,
        dataset: -1,
        state: "failed",
        error:
          `No dataset among the ${files.length} file(s) dropped (${names}${files.length > 3 ? ", …" : ""}): ` +
          "expected a .jsonl, .csv, .tsv, .parquet, .json or .eval file (images go beside it, or in its folder).",
      };
      return;
    }
    this.#check({ ...base, dataset: data[0]!, state: "checking" });
  }

  /** Reads another of the dropped datasets instead. */
  chooseDataset(index: number): void {
    if (this.draft) this.#check({ ...this.draft, dataset: index, choices: {}, state: "checking" });
  }

  /** Reads the file again with the user's format, column mapping or delimiter. */
  recheck(choices: ReadChoices): void {
    if (this.draft) this.#check({ ...this.draft, choices, state: "checking" });
  }

  /** Forgets the dropped files (stopping a check under way). */
  discard(): void {
    this.#cancelCheck();
    this.draft = undefined;
  }

  #cancelCheck(): void {
    if (this.#checkJob) void this.call((api) => api.cancel(this.#checkJob)).catch(() => undefined);
    this.#checkJob = 0;
  }

  #request(draft: ImportDraft): ReadRequest {
    return { files: draft.files, dataset: draft.dataset, ...draft.choices };
  }

  #check(draft: ImportDraft): void {
    this.#cancelCheck();
    const id = ++this.#jobIds;
    this.#checkJob = id;
    const { report: _report, error: _error, progress: _progress, ...rest } = draft;
    this.draft = { ...rest, state: "checking" };
    const current = () => this.#checkJob === id && this.draft !== undefined;
    const onProgress = (progress: ReadProgress) => {
      if (current()) this.draft = { ...this.draft!, progress };
    };
    this.call((api) => api.check(this.#request(draft), id, proxy(onProgress))).then(
      (report) => {
        if (!current()) return;
        this.#checkJob = 0;
        this.draft = { ...this.draft!, state: "checked", report };
      },
      (error: unknown) => {
        if (!current()) return;
        this.#checkJob = 0;
        const file = draft.files[draft.dataset]?.path ?? "the file";
        this.draft = { ...this.draft!, state: "failed", error: `${file}: ${errorText(error)}` };
      },
    );
  }

  /**
   * Imports the checked draft as dataset `datasetId`: `mode: "new"` refuses an
   * id that exists; `"add"` adds only the ids that dataset does not have yet.
   * Resolves when the import ends (finished, cancelled or failed: see `job`).
   */
  async startImport(datasetId: string, mode: ImportMode): Promise<void> {
    const draft = this.draft;
    if (!draft?.report || this.job?.state === "running") return;
    const id = ++this.#jobIds;
    this.#importJob = id;
    const started = performance.now();
    const total = draft.report.rows;
    const path = draft.report.path;
    this.job = { datasetId, mode, path, state: "running", rows: 0, total };
    const onProgress = (p: ReadProgress) => {
      if (this.#importJob !== id) return;
      const seconds = (performance.now() - started) / 1000;
      const rate = seconds > 0.2 ? p.rows / seconds : undefined;
      const etaMs = rate ? (Math.max(0, total - p.rows) / rate) * 1000 : undefined;
      this.job = { ...this.job!, rows: p.rows, ...(rate && { rate }), ...(etaMs !== undefined && { etaMs }) };
    };
    try {
      const report = await this.call((api) =>
        api.importFiles({ ...this.#request(draft), db: this.#store.db, datasetId, mode }, id, proxy(onProgress)),
      );
      const seconds = Math.max(report.seconds, 1e-3);
      this.job = {
        ...this.job!,
        state: report.cancelled ? "cancelled" : "finished",
        rows: report.rows || this.job!.rows,
        rate: report.rows / seconds,
        etaMs: 0,
        report,
      };
      if (!report.cancelled) this.draft = undefined;
    } catch (error) {
      this.job = { ...this.job!, state: isCancellation(error) ? "cancelled" : "failed", error: errorText(error) };
    } finally {
      this.#importJob = 0;
      await this.#store.refresh();
    }
  }

  /** Stops the import under way (what happens to what it wrote: see `importFiles`). */
  cancelImport(): void {
    const id = this.#importJob;
    if (id) void this.call((api) => api.cancel(id)).catch(() => undefined);
  }

  /** Hides the last import's outcome. */
  dismissJob(): void {
    if (this.job?.state !== "running") this.job = undefined;
  }

  /**
   * Adds the demo datasets the app ships (POPE with its images, captions,
   * tiny-lm) from the app's own origin: one call gives a new user data. A demo
   * already there is left as it is.
   *
   * @example await app.imports.addDemo() // [{ datasetId: "pope", added: 600, … }, …]
   */
  async addDemo(): Promise<readonly DemoReport[]> {
    if (this.demo?.state === "running") throw new Error("the demo datasets are being added already");
    const id = ++this.#jobIds;
    let before = 0;
    let last = "";
    this.demo = { state: "running", rows: 0, total: DEMO_ROWS };
    const onProgress = (p: { file: string; rows: number }) => {
      if (p.file !== last) {
        before = this.demo?.rows ?? 0;
        last = p.file;
      }
      this.demo = { ...this.demo!, file: p.file, rows: before + p.rows };
    };
    const base = new URL(`${import.meta.env.BASE_URL}demo/`, location.href).href;
    try {
      const reports = await this.call((api) => api.addDemo(this.#store.db, base, id, proxy(onProgress)));
      this.demo = { state: "finished", rows: DEMO_ROWS, total: DEMO_ROWS, reports };
      return reports;
    } catch (error) {
      this.demo = {
        state: "failed",
        rows: 0,
        total: DEMO_ROWS,
        error: `Adding the demo datasets failed: ${errorText(error)}`,
      };
      throw error;
    } finally {
      await this.#store.refresh();
    }
  }

  dispose(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#api = undefined;
  }
}
