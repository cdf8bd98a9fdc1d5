/**
 * The Chromium half of the forward-speed benchmark, loaded into the app's
 * page by `forward-speed.node.ts`: one forward of the bundled tiny-vlm
 * through the page's model worker (the product path: a comlink call across
 * the worker boundary), and the same forward timed inside a worker.
 */
import type { ModelInput } from "../../core/model.ts";
import { ModelClient } from "../../ui/runtime.ts";

let client: ModelClient | undefined;
let inWorker: Worker | undefined;

/** How the in-worker runtime is set up (the model worker runs the same configuration code). */
export interface ForwardBenchSetup {
  readonly threads: number;
  readonly crossOriginIsolated: boolean;
  readonly ort: string;
}

/** Starts the page's model worker (WASM) and the in-worker timer, each with tiny-vlm loaded. */
export async function startForwardBench(input: ModelInput): Promise<ForwardBenchSetup> {
  client = new ModelClient();
  // memo off: the same forward is timed again and again, and each must be computed.
  await client.load({ kind: "bundled", key: "tiny-vlm" }, { device: "wasm", memo: false });
  inWorker = new Worker(new URL("./forward-speed-worker.browser.ts", import.meta.url), { type: "module" });
  const worker = inWorker;
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ setup?: ForwardBenchSetup; error?: string }>) =>
      event.data.setup ? resolve(event.data.setup) : reject(new Error(event.data.error));
    worker.postMessage({ input, n: 1 });
  });
}

/** Times `n` forwards of `input` (answer "yes" teacher-forced): from the page through the model worker, or inside a worker. */
export async function timeForwards(where: "page" | "in-worker", input: ModelInput, n: number): Promise<number[]> {
  if (!client || !inWorker) throw new Error("call startForwardBench() first");
  if (where === "in-worker") {
    const worker = inWorker;
    return new Promise((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<{ times?: number[]; error?: string }>) =>
        event.data.times ? resolve(event.data.times) : reject(new Error(event.data.error));
      worker.postMessage({ input, n });
    });
  }
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await client.call((api) => api.forward(input, { answer: "yes" }));
    times.push(performance.now() - start);
  }
  return times;
}

/** Stops both workers. */
export function stopForwardBench(): void {
  client?.terminate();
  inWorker?.terminate();
  client = undefined;
  inWorker = undefined;
}
