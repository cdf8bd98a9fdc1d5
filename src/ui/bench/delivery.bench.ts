/**
 * bench:app's delivery numbers: what a first visit transfers to load the bundled model (the shell, the wasm
 * runtime, the model files), what the rest of the visit adds (the offline copy saved, the engine check done: it
 * fetches the WebGPU build only for a hardware adapter), how often each wasm is downloaded, and what a
 * second visit (a reload) transfers for the same — with the service worker on (as users get it) and, side by
 * side, with service workers blocked (HTTP cache only). Bytes are as sent on the wire (compressed bodies plus
 * headers), counted for the page, its workers and the service worker, in a fresh browser context so the first
 * visit starts with empty caches; responses the service worker answered from its cache are not on the wire.
 */
import type { Page, Request } from "playwright-core";
import type { BrowserHarness } from "../../node/browser-harness.ts";
import { ENGINE_CHECKS_KEY } from "../app/model-summary.ts";

const MB = (n: number) => `${(n / 1e6).toFixed(2)} MB`;

/**
 * Waits until the page's service worker is activated: its install (the offline copy) is done. Polled from
 * here: `page.waitForFunction` takes an async predicate's promise itself as truthy, and so did not wait.
 */
export async function offlineCopyActive(page: Page, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const state = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.state);
    if (state === "activated") return;
    if (Date.now() > until) throw new Error(`the service worker was not activated within ${timeoutMs / 1000} s`);
    await page.waitForTimeout(250);
  }
}

/** Loads bundled:tiny-vlm on the Models page and waits until it is loaded. */
async function loadModel(page: Page, url: string): Promise<void> {
  await page.goto(`${url}#/models`);
  const card = page.locator('[data-testid="model-card"][data-model="bundled:tiny-vlm"]');
  await card.getByTestId("load").click();
  await card.getByTestId("model-loaded-badge").waitFor({ timeout: 120_000 });
  await page.waitForTimeout(1000);
}

/**
 * One visit's wire traffic: bytes, and each wasm file's full downloads (200 with a body on the wire),
 * revalidations (304) and answers from the browser's HTTP cache (200 with nothing on the wire).
 */
class Wire {
  bytes = 0;
  wasm = new Map<string, { full: number; revalidated: number; httpCache: number }>();
  reset() {
    this.bytes = 0;
    this.wasm.clear();
  }
  async count(request: Request) {
    const response = await request.response().catch(() => null);
    if (!response || response.fromServiceWorker()) return; // answered from the worker's cache: not on the wire
    const sizes = await request.sizes().catch(() => undefined);
    if (sizes) this.bytes += sizes.responseBodySize + sizes.responseHeadersSize;
    if (!request.url().endsWith(".wasm")) return;
    const name = request.url().split("/").pop()!.replace("ort-wasm-simd-threaded", "ort");
    const seen = this.wasm.get(name) ?? { full: 0, revalidated: 0, httpCache: 0 };
    if (response.status() === 304) seen.revalidated++;
    // Chromium reports a response read from the HTTP cache with no body on the wire, or a negative one (minus its
    // headers' size) for the service worker's own requests: both sent nothing.
    else if (sizes && sizes.responseBodySize <= 0) seen.httpCache++;
    else seen.full++;
    this.wasm.set(name, seen);
  }
  wasmText() {
    if (this.wasm.size === 0) return "no wasm fetched";
    return [...this.wasm]
      .map(
        ([name, n]) =>
          `${name} ${n.full}×${n.revalidated ? ` (+${n.revalidated} 304)` : ""}${n.httpCache ? ` (+${n.httpCache} from the HTTP cache)` : ""}`,
      )
      .join(", ");
  }
}

/**
 * Prints first-visit and second-visit transfer (targets: ≤ 10 MB and ≤ 200 KB) and the wasm downloads per
 * visit, with the service worker and without.
 *
 * @example await benchDelivery(harness, line) // "first visit: load tiny-vlm (target ≤ 10 MB)   4.6 MB …"
 */
export async function benchDelivery(harness: BrowserHarness, line: (label: string, value: string) => void) {
  for (const serviceWorkers of ["allow", "block"] as const) {
    const context = await harness.context.browser()!.newContext({ serviceWorkers });
    const tag = serviceWorkers === "allow" ? "service worker on" : "service workers blocked";
    try {
      const wire = new Wire();
      const pending: Promise<void>[] = [];
      context.on("requestfinished", (r) => void pending.push(wire.count(r)));
      const settle = async () => {
        await Promise.all(pending);
        pending.length = 0;
      };
      const page = await context.newPage();
      await loadModel(page, harness.url);
      await settle();
      line(`first visit, ${tag}: load tiny-vlm (≤ 10 MB)`, `${MB(wire.bytes)}; wasm: ${wire.wasmText()}`);
      if (serviceWorkers === "allow")
        line(
          "  WebGPU adapter (the engine check fetches the WebGPU build only for a hardware one)",
          await page.evaluate(async () => {
            type Info = { vendor?: string; architecture?: string; isFallbackAdapter?: boolean };
            const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<{ info?: Info } | null> } }).gpu;
            const adapter = gpu ? await gpu.requestAdapter() : undefined;
            if (!adapter) return gpu ? "none" : "no navigator.gpu";
            const name = [adapter.info?.vendor, adapter.info?.architecture].filter(Boolean).join(" ");
            return `${name || "unnamed"}${adapter.info?.isFallbackAdapter ? " (a software fallback adapter)" : ""}`;
          }),
        );
      if (serviceWorkers === "allow") {
        const before = wire.bytes;
        await offlineCopyActive(page, 300_000);
        // The whole visit: the engine check (it waits for the load, then fetches the WebGPU build for a hardware
        // adapter) has finished too.
        await page.waitForFunction((key) => !!localStorage.getItem(key), ENGINE_CHECKS_KEY, { timeout: 300_000 });
        await page.waitForTimeout(1000);
        await settle();
        line(
          `  + the offline copy saved (whole visit)`,
          `${MB(wire.bytes)} (${MB(wire.bytes - before)} more); wasm: ${wire.wasmText()}`,
        );
      }
      wire.reset();
      await page.reload();
      await loadModel(page, harness.url);
      await settle();
      line(`second visit, ${tag}: reload, load (≤ 200 KB)`, `${MB(wire.bytes)}; wasm: ${wire.wasmText()}`);
    } finally {
      await context.close();
    }
  }
}
