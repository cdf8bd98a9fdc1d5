/**
 * The Chromium side of `npm run bench:runtime`: loaded into the app page by
 * the bench script, it runs forwards with and without capture in the model
 * worker (WASM) and returns the timings.
 */
import { startModelClient } from "../../ui/runtime.ts";
import { timeCapture } from "./forward-timing.ts";

export async function benchWorkerCapture(cases: { prompt: string; image: string }[], rounds: number) {
  const client = startModelClient();
  try {
    // memo off: the same forwards are timed again and again, and each must be computed.
    await client.load({ kind: "bundled", key: "tiny-vlm" }, { device: "wasm", memo: false });
    const inputs = await Promise.all(
      cases.map(async (c) => ({
        prompt: c.prompt,
        image: new Uint8Array(await (await fetch(`/demo/${c.image}`)).arrayBuffer()),
      })),
    );
    return await timeCapture((input, capture) => client.call((api) => api.forward(input, capture)), inputs, rounds);
  } finally {
    client.terminate();
  }
}
