/**
 * Delivery from `vite preview` (`npm start`): the wasm runtime and the bundled models go out precompressed
 * (`.br`, `.gz` written at build time) with their `Content-Encoding` and unpack to the very bytes built; a
 * request that repeats the ETag gets 304 (nothing sent again); Vite's hashed assets go out compressed and
 * immutable; the service worker script is always revalidated. A first visit downloads each wasm build it uses
 * once (the offline copy's install takes what the page fetched from the HTTP cache), and never the WebGPU build
 * on a software adapter (headless Chromium's SwiftShader). A returning visit, its page under the service
 * worker, reuses the machine code Chromium compiled for the wasm runtime the time before.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtOrtDir, startBrowserHarness, type BrowserHarness } from "../node/browser-harness.ts";
import { ENGINE_CHECKS_KEY } from "./app/model-summary.ts";

let harness: BrowserHarness;
beforeAll(async () => {
  harness = await startBrowserHarness();
});
afterAll(async () => harness?.close());

it("serves the wasm and the models precompressed, revalidates them with 304, and marks hashed assets immutable", async () => {
  const wasm = `${builtOrtDir(harness.outDir)}ort-wasm-simd-threaded.wasm`;
  const raw = statSync(join(harness.outDir, wasm)).size;
  const br = statSync(join(harness.outDir, `${wasm}.br`)).size;
  expect(br).toBeLessThan(raw / 2);
  const page = await harness.context.newPage();
  await page.goto(harness.url);
  const got = await page.evaluate(async (path) => {
    const r = await fetch(`/${path}`, { cache: "no-store" });
    return {
      encoding: r.headers.get("Content-Encoding"),
      type: r.headers.get("Content-Type"),
      etag: r.headers.get("ETag"),
      bytes: (await r.arrayBuffer()).byteLength,
    };
  }, wasm);
  expect(got).toMatchObject({ encoding: "br", type: "application/wasm", bytes: raw });
  // Its folder is named by its hash: sent immutable, so a returning page neither asks for it nor compiles it again.
  const wasmHeaders = (
    await page.request.get(`${harness.url}${wasm}`, { headers: { "Accept-Encoding": "br" } })
  ).headers();
  expect(wasmHeaders["cache-control"]).toBe("public, max-age=31536000, immutable");
  const again = await page.request.get(`${harness.url}${wasm}`, {
    headers: { "Accept-Encoding": "br", "If-None-Match": got.etag! },
  });
  expect(again.status()).toBe(304);
  const gz = await page.request.get(`${harness.url}models/tiny-vlm/config.json`, {
    headers: { "Accept-Encoding": "gzip" },
  });
  expect(gz.headers()["content-encoding"]).toBe("gzip");
  expect(JSON.parse(await gz.text())).toEqual(
    JSON.parse(readFileSync(join(harness.outDir, "models/tiny-vlm/config.json"), "utf8")),
  );
  const plain = await page.request.get(`${harness.url}${wasm}`, { headers: { "Accept-Encoding": "identity" } });
  expect(plain.headers()["content-encoding"]).toBeUndefined();
  expect((await plain.body()).length).toBe(raw);
  const script = await page.locator("script[type=module][src]").first().getAttribute("src");
  expect(script).toMatch(/^\/assets\/.+-[\w-]{8,}\.js$/);
  const asset = await page.request.get(`${harness.url}${script!.slice(1)}`, { headers: { "Accept-Encoding": "br" } });
  expect(asset.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
  expect(asset.headers()["content-encoding"]).toBe("br");
  expect(await asset.text()).toBe(readFileSync(join(harness.outDir, script!.slice(1)), "utf8"));
  // The service worker is always revalidated, so a new build is found on the next visit.
  const sw = await page.request.get(`${harness.url}sw.js`);
  expect(sw.headers()["cache-control"]).toBe("no-cache");
  expect(await sw.text()).toMatch(/^const __EVALRX_PRECACHE__ = \{"version":"[0-9a-f]{16}"/);
});

it("a first visit downloads the wasm build it uses once, shared by the page's workers and the offline copy's install, and not the WebGPU build on a software adapter", async () => {
  // A fresh context: empty HTTP cache, no service worker yet, nothing remembered (so the engine check runs).
  const context = await harness.context.browser()!.newContext();
  try {
    const downloads = new Map<string, number>();
    const counted: Promise<void>[] = [];
    // When the page's own download of the CPU build ended, and when the service worker started: the install
    // must start after it, or it finds nothing in the HTTP cache and downloads the wasm a second time.
    let pageWasmDone = Infinity;
    let workerStarted = Infinity;
    context.on("serviceworker", () => (workerStarted = Math.min(workerStarted, Date.now())));
    context.on("requestfinished", (request) => {
      const finished = Date.now();
      counted.push(
        (async () => {
          const name = /\/ort\/[0-9a-f]{12}\/(ort-wasm[\w.-]*\.wasm)$/.exec(request.url())?.[1];
          const response = await request.response();
          if (!name || !response || response.fromServiceWorker()) return;
          if (name === "ort-wasm-simd-threaded.wasm" && !request.serviceWorker())
            pageWasmDone = Math.min(pageWasmDone, finished);
          // A body on the wire is a download; a 304 or an answer from the HTTP cache is not.
          const { responseBodySize } = await request.sizes();
          if (response.status() === 200 && responseBodySize > 0) downloads.set(name, (downloads.get(name) ?? 0) + 1);
        })(),
      );
    });
    const page = await context.newPage();
    await page.goto(`${harness.url}#/models`);
    const card = page.locator('[data-testid="model-card"][data-model="bundled:tiny-vlm"]');
    await card.getByTestId("load").click();
    await card.getByTestId("model-loaded-badge").waitFor({ timeout: 120_000 });
    // The whole visit: the offline copy saved (the service worker installed and active) and the engine
    // check done (it would fetch the WebGPU build for a hardware adapter). Polled from here: waitForFunction
    // takes an async predicate's promise as truthy at once.
    await expect
      .poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.state), {
        timeout: 240_000,
      })
      .toBe("activated");
    await page.waitForFunction((key) => !!localStorage.getItem(key), ENGINE_CHECKS_KEY, { timeout: 240_000 });
    const checks = await page.evaluate((key) => localStorage.getItem(key), ENGINE_CHECKS_KEY);
    await page.goto(`${harness.url}#/settings`);
    await expect
      .poll(() => page.getByTestId("offline-state").textContent(), { timeout: 120_000 })
      .toMatch(/works offline/);
    await Promise.all(counted);
    expect(pageWasmDone).toBeLessThan(Infinity);
    expect(workerStarted).toBeGreaterThan(pageWasmDone);
    expect(downloads.get("ort-wasm-simd-threaded.wasm")).toBe(1);
    for (const [name, n] of downloads) expect(n, name).toBe(1);
    // Headless Chromium's adapter is SwiftShader: the check left it out, and nothing fetched the WebGPU build.
    expect(checks).toContain("the WebGPU adapter is software (google swiftshader");
    expect([...downloads.keys()]).toEqual(["ort-wasm-simd-threaded.wasm"]);
  } finally {
    await context.close();
  }
});

/** The V8 WebAssembly events Chromium traced, in every process, while `run` ran. */
async function wasmEvents(browser: Browser, page: Page, run: () => Promise<unknown>) {
  // V8's wasm events reach the trace from a worker's thread only with the timeline's category on as well.
  await browser.startTracing(page, { categories: ["v8.wasm", "disabled-by-default-devtools.timeline"] });
  const failed = await run().then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const trace = JSON.parse((await browser.stopTracing()).toString("utf8")) as {
    traceEvents: { name: string; args?: { url?: string } }[];
  };
  if (failed) throw failed.error;
  return trace.traceEvents.filter((e) => e.name.startsWith("v8.wasm."));
}

it("a returning visit, under the service worker, reuses the machine code compiled for the wasm runtime", async () => {
  // A profile on disk: the HTTP cache and the code cache last from one page to the next, as a user's do.
  const returning = await startBrowserHarness({ persistentProfile: true, appDir: harness.outDir });
  try {
    const browser = returning.context.browser()!;
    const wasmUrl = `${returning.url}${builtOrtDir(harness.outDir)}ort-wasm-simd-threaded.wasm`;
    const loadModel = async (page: Page) => {
      await page.goto(`${returning.url}#/models`);
      const card = page.locator('[data-testid="model-card"][data-model="bundled:tiny-vlm"]');
      await card.getByTestId("load").click();
      await card.getByTestId("model-loaded-badge").waitFor({ timeout: 120_000 });
    };
    const first = await returning.context.newPage();
    // Chromium keeps the code once its optimising compiler has done enough of it, seconds after the load.
    const seen = await wasmEvents(browser, first, async () => {
      await loadModel(first);
      await expect
        .poll(() => first.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.state), {
          timeout: 240_000,
        })
        .toBe("activated");
      await first.waitForTimeout(10_000);
    });
    for (let window = 0; window < 12 && !seen.some((e) => e.name === "v8.wasm.cachedModule"); window++)
      seen.push(...(await wasmEvents(browser, first, () => first.waitForTimeout(5_000))));
    expect(
      seen.filter((e) => e.name === "v8.wasm.compiledModule").map((e) => e.args?.url),
      `the first visit compiled the wasm runtime (traced: ${seen.map((e) => e.name).join(", ")})`,
    ).toContain(wasmUrl);
    expect(
      seen.map((e) => e.name),
      "Chromium kept the compiled code",
    ).toContain("v8.wasm.cachedModule");
    await first.close();

    const second = await returning.context.newPage();
    const again = await wasmEvents(browser, second, () => loadModel(second));
    expect(await second.evaluate(() => !!navigator.serviceWorker.controller), "the service worker answers").toBe(true);
    expect(again.filter((e) => e.name === "v8.wasm.moduleCacheHit").map((e) => e.args?.url)).toContain(wasmUrl);
    expect(again.filter((e) => e.name === "v8.wasm.compiledModule").map((e) => e.args?.url)).not.toContain(wasmUrl);
    expect(returning.foreignRequests).toEqual([]);
  } finally {
    await returning.close();
  }
});
