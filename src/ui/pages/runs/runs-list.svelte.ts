import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import type { RunHead } from "../../../store/heads.ts";
import { runPassRate } from "./run-summary.ts";
import { downloadBlob } from "./run-files.ts";

export type RunSort = "started" | "id" | "status" | "pass" | "dataset" | "model";

/**
 * The runs list: every run in this browser, sortable, with live and
 * interrupted runs told apart (a running run whose writer lock nobody holds
 * was interrupted), selection for compare and delete, and run files in and out.
 */
export class RunsListState {
  sort = $state<RunSort>("started");
  descending = $state(true);
  filter = $state("");
  selected = $state<string[]>([]);
  /** Running runs no live writer holds (interrupted), by id. */
  interrupted = $state.raw<ReadonlySet<string>>(new Set());
  message = $state<string | undefined>();
  failure = $state<string | undefined>();
  busy = $state(false);
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  get rows(): readonly RunHead[] {
    const needle = this.filter.trim().toLowerCase();
    const runs = this.#app.store.runs.filter(
      (r) =>
        !needle ||
        r.id.toLowerCase().includes(needle) ||
        r.dataset.toLowerCase().includes(needle) ||
        r.model.toLowerCase().includes(needle),
    );
    const key: (r: RunHead) => string | number =
      this.sort === "id"
        ? (r) => r.id
        : this.sort === "status"
          ? (r) => r.status
          : this.sort === "dataset"
            ? (r) => r.dataset
            : this.sort === "model"
              ? (r) => r.model
              : this.sort === "pass"
                ? (r) => runPassRate(r)?.mean ?? -1
                : (r) => r.startedAt;
    const sign = this.descending ? -1 : 1;
    return [...runs].sort((a, b) => {
      const x = key(a);
      const y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * sign;
    });
  }

  sortBy(column: RunSort): void {
    if (this.sort === column) this.descending = !this.descending;
    else {
      this.sort = column;
      this.descending = column === "started" || column === "pass";
    }
  }

  toggle(id: string): void {
    this.selected = this.selected.includes(id) ? this.selected.filter((s) => s !== id) : [...this.selected, id];
  }

  /** Asks the lock manager which running runs have a live writer; the others were interrupted. */
  async checkInterrupted(): Promise<void> {
    const store = await this.#app.store.ready;
    const running = this.#app.store.runs.filter((r) => r.status === "running");
    const dead = new Set<string>();
    for (const r of running) if (!this.#app.jobs.job(r.id) && !(await store.runLockHolder(r.id))) dead.add(r.id);
    this.interrupted = dead;
  }

  async resume(id: string): Promise<void> {
    this.failure = undefined;
    const run = this.#app.store.runs.find((r) => r.id === id);
    if (!run) return;
    try {
      await this.#app.jobs.resume(run);
      this.#app.router.go({ page: "runs", id });
    } catch (error) {
      this.failure = errorText(error);
    }
  }

  async remove(ids: readonly string[]): Promise<void> {
    this.failure = undefined;
    const store = await this.#app.store.ready;
    const gone: string[] = [];
    for (const id of ids) {
      try {
        await store.deleteRun(id);
        gone.push(id);
      } catch (error) {
        this.failure = `${id}: ${errorText(error)}`;
      }
    }
    this.selected = this.selected.filter((s) => !gone.includes(s));
    if (gone.length) this.message = `Deleted ${gone.length} run${gone.length === 1 ? "" : "s"}.`;
    await this.#app.store.changed({ kind: "runs" });
  }

  /** Downloads a run as the CLI's run file (`evalrx gate run.json --baseline other.json` reads it). */
  async exportRun(id: string): Promise<void> {
    this.failure = undefined;
    try {
      const blob = await this.#app.stats.api.exportRunFile(this.#app.store.db, id, { dataset: true, images: false });
      downloadBlob(blob, `${id}.json`);
    } catch (error) {
      this.failure = `exporting ${id}: ${errorText(error)}`;
    }
  }

  /** Imports run files the CLI or another browser wrote (in the stats worker); each is checked before anything is stored. */
  async importFiles(files: readonly File[]): Promise<void> {
    this.failure = undefined;
    this.message = undefined;
    this.busy = true;
    const done: string[] = [];
    const problems: string[] = [];
    try {
      for (const file of files) {
        try {
          const { runId } = await this.#app.stats.api.importRunFile(this.#app.store.db, file, file.name);
          done.push(runId);
        } catch (error) {
          const text = errorText(error);
          problems.push(text.startsWith(file.name) ? text : `${file.name}: ${text}`);
        }
      }
    } finally {
      this.busy = false;
    }
    if (done.length) this.message = `Imported ${done.map((id) => `'${id}'`).join(", ")}.`;
    if (problems.length) this.failure = problems.join("\n");
    await this.#app.store.changed({ kind: "runs" });
  }
}
