/**
 * bench:app's delivery numbers: what a first visit transfers to load the bundled model (the shell, the wasm
 * runtime, the model files), how often the wasm is fetched, and what a second visit (a reload, warm HTTP
 * cache) transfers for the same. Bytes are as sent on the wire (compressed bodies plus headers), counted for
 * the page and its workers, in a fresh browser context so the first visit starts with an empty cache.
 */
import type { Page, Request } from "playwright-core";
import type { BrowserHarness } from "../../node/browser-harness.ts";

const MB = (n: number) => `${(n / 1e6).toFixed(2)} MB`;

/** Loads bundled:tiny-vlm on the Models page and waits until it is loaded. */
async function loadModel(page: Page, url: string): Promise<void> {
  await page.goto(`${url}#/models`);
  const card = page.locator('[data-testid="model-card"][data-model="bundled:tiny-vlm"]');
  await card.getByTestId("load").click();
  await card.getByTestId("model-loaded-badge").waitFor({ timeout: 120_000 });
  await page.waitForTimeout(1000);
}

/**
 * Prints first-visit and second-visit transfer (targets: ≤ 10 MB and ≤ 200 KB) and the wasm fetches per visit.
 *
 * @example await benchDelivery(harness, line) // "first visit: load tiny-vlm   6.12 MB …"
 */
export async function benchDelivery(harness: BrowserHarness, line: (label: string, value: string) => void) {
  const context = await harness.context.browser()!.newContext();
  try {
    let bytes = 0;
    let wasm: string[] = [];
    const counted = async (request: Request) => {
      const sizes = await request.sizes().catch(() => undefined);
      if (sizes) bytes += sizes.responseBodySize + sizes.responseHeadersSize;
      if (request.url().endsWith(".wasm")) wasm.push(request.url().split("/").pop()!);
    };
    context.on("requestfinished", (r) => void counted(r));
    const page = await context.newPage();
    await loadModel(page, harness.url);
    line(
      "first visit: load tiny-vlm (target ≤ 10 MB)",
      `${MB(bytes)}; wasm fetched ${wasm.length}× (${wasm.join(", ")})`,
    );
    bytes = 0;
    wasm = [];
    await page.reload();
    await loadModel(page, harness.url);
    line("second visit: reload, load again (target ≤ 200 KB)", `${MB(bytes)}; wasm fetched ${wasm.length}×`);
  } finally {
    await context.close();
  }
}
