import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../node/browser-harness.ts";

let harness: BrowserHarness;
beforeAll(async () => {
  harness = await startBrowserHarness();
});
afterAll(async () => harness?.close());

it("loads the built app, shows the backend, runs ONNX Runtime WASM in a worker, and never leaves localhost", async () => {
  const page = await harness.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  const workers: string[] = [];
  page.on("worker", (worker) => workers.push(worker.url()));

  await page.goto(harness.url);
  const backend = page.getByTestId("backend");
  await backend.waitFor({ timeout: 120_000 });
  expect(await backend.textContent()).toMatch(/^Backend: (WebGPU|WASM) — .+/);
  // The self-test ran double.onnx through ORT's WASM build inside the model worker.
  expect(await page.getByTestId("ort").textContent()).toContain("WASM self-test 2, 4");
  expect(workers.some((url) => url.includes("model.worker"))).toBe(true);
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  // The page opened its IndexedDB store, asked for persistent storage, and shows what it uses.
  await page.getByTestId("storage").waitFor();
  const storage = (await page.getByTestId("storage").textContent())?.replace(/\s+/g, " ").trim();
  expect(storage).toMatch(/^Storage: [\d.]+ MB used of [\d.]+ MB; (persistent|not persistent)/);

  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});

it("the request guard sees and blocks requests to other hosts, from the page and from workers", async () => {
  const page = await harness.context.newPage();
  await page.goto(harness.url);
  const before = harness.foreignRequests.length;
  await page.evaluate(async () => {
    await fetch("https://example.com/from-page").catch(() => undefined);
    const source = 'fetch("https://example.com/from-worker").catch(() => 0).then(() => postMessage("done"));';
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
    await new Promise((resolve) => worker.addEventListener("message", resolve));
    worker.terminate();
  });
  expect(harness.foreignRequests.slice(before).sort()).toEqual([
    "https://example.com/from-page",
    "https://example.com/from-worker",
  ]);
  harness.foreignRequests.splice(before);
});
