import { wrap, type Remote } from "comlink";
import type { StatsWorkerApi } from "../../../workers/stats.worker.ts";

/**
 * The stats worker, started on first use: resampling (bootstraps, power by
 * simulation, A/A calibration) runs there so the page never freezes.
 *
 * @example const { lo, hi } = await app.stats.api.pairedBootstrap(diffs, clusters, { seed: 1 })
 */
export class StatsService {
  #worker: Worker | undefined;
  #api: Remote<StatsWorkerApi> | undefined;

  get api(): Remote<StatsWorkerApi> {
    if (!this.#api) {
      this.#worker = new Worker(new URL("../../../workers/stats.worker.ts", import.meta.url), { type: "module" });
      this.#api = wrap<StatsWorkerApi>(this.#worker);
    }
    return this.#api;
  }

  dispose(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#api = undefined;
  }
}
