import { wrap, type Remote } from "comlink";
import type { ModelWorkerApi } from "../../workers/model.worker.ts";

/** Starts the model worker; the page talks to it through this one comlink proxy. */
export function startModelWorker(): { api: Remote<ModelWorkerApi>; worker: Worker } {
  const worker = new Worker(new URL("../../workers/model.worker.ts", import.meta.url), { type: "module" });
  return { api: wrap<ModelWorkerApi>(worker), worker };
}
