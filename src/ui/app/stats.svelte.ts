import { wrap, type Remote } from "comlink";
import type { StatsWorkerApi } from "../../../workers/stats.worker.ts";

/**
 * The stats worker, started on first use: resampling (bootstraps, power by
 * simulation, A/A calibration) and the store-backed jobs (run tables, the
 * Compare page's gate) run there so the page never freezes.
 *
 * Store-backed jobs take a ticket (`ticket()`): the worker lets the newest
 * ticket of a kind win and stops older calls. Tickets come from here, one
 * counter per worker, so a page opened again never reuses an old number.
 *
 * @example const result = await app.stats.api.compareStored(store.db, a, b, { tolerance: 0.03 }, app.stats.ticket())
 */
export class StatsService {
  #worker: Worker | undefined;
  #api: Remote<StatsWorkerApi> | undefined;
  #tickets = 0;
  /** Set when the worker crashed (its pending calls never answer): pages say so and offer a restart. */
  failure = $state<string | undefined>();

  get api(): Remote<StatsWorkerApi> {
    if (!this.#api) {
      const worker = new Worker(new URL("../../../workers/stats.worker.ts", import.meta.url), { type: "module" });
      worker.addEventListener("error", (event) => {
        this.failure = `the statistics worker stopped${event.message ? `: ${event.message}` : ""}; restart it to go on`;
      });
      this.#worker = worker;
      this.#api = wrap<StatsWorkerApi>(worker);
    }
    return this.#api;
  }

  /** A number larger than every one handed out before (the worker lets the newest ticket of a job kind win). */
  ticket(): number {
    return ++this.#tickets;
  }

  /** Ends the worker (and anything it was computing); the next call starts a fresh one. */
  restart(): void {
    this.dispose();
    this.failure = undefined;
  }

  dispose(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#api = undefined;
  }
}
