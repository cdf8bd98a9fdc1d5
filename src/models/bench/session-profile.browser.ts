/** The page half of the session profile: starts one profiling worker per thread count and runs the workload. */
import type { ModelInput } from "../../core/model.ts";

const workers = new Map<number, Worker>();

export async function profileInWorker(threads: number, inputs: ModelInput[], rounds: number): Promise<unknown> {
  let worker = workers.get(threads);
  if (!worker) {
    worker = new Worker(new URL("./session-profile-worker.browser.ts", import.meta.url), { type: "module" });
    workers.set(threads, worker);
  }
  const w = worker;
  return new Promise((resolve, reject) => {
    w.onmessage = (event: MessageEvent<{ error?: string }>) =>
      event.data.error ? reject(new Error(event.data.error)) : resolve(event.data);
    w.postMessage({ inputs, rounds, threads });
  });
}
