/**
 * The app on a plane, in Debian's Chromium: one visit online saves the offline copy (the service worker's
 * precache of this build) and stores a run and a report; then, with the browser context offline, a reload
 * starts the app from the service worker (still cross-origin isolated, so ONNX Runtime keeps its threads),
 * the playground answers a demo case with the bundled model as it did online, and the stored run and
 * report open, and so does every other page (each page's code is its own chunk). Settings says what is kept
 * and how big it is. ONNX Runtime's WebGPU build is not fetched on headless Chromium's software adapter, and
 * is kept for offline use once the user chooses WebGPU in Settings.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtOrtDir, startBrowserHarness, type BrowserHarness } from "../../node/browser-harness.ts";
import { parseReport } from "../../report/schema.ts";
import { demoRunExport } from "../../share/fixtures.ts";
import { ROUTES } from "../app/routes.ts";

const REPORT = new URL("../../report/fixtures/cli-report-200.json", import.meta.url).pathname;
const report = parseReport(readFileSync(REPORT, "utf8"));

let harness: BrowserHarness;
let dir: string;
/** ONNX Runtime's WebGPU build in the build (`ort/<hash>/…`). */
let WEBGPU_WASM: string;
beforeAll(async () => {
  harness = await startBrowserHarness();
  WEBGPU_WASM = `${builtOrtDir(harness.outDir)}ort-wasm-simd-threaded.asyncify.wasm`;
  dir = mkdtempSync(join(tmpdir(), "evalrx-offline-e2e-"));
});
afterAll(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Picks the first POPE demo case in the playground and returns the plain answer's text. */
async function askFirstCase(page: Page): Promise<string> {
  await page.goto(`${harness.url}#/playground?dataset=pope`);
  await page.getByTestId("pg-case").first().click({ timeout: 60_000 });
  const answer = page.getByTestId("pg-plain-answer");
  await answer.waitFor({ timeout: 120_000 });
  return answer.innerText();
}

it("after one visit, starts, runs the playground and opens a stored run and report with the network off", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  // Every request for the WebGPU build, by the page, its workers or the service worker.
  const webgpuBuild: string[] = [];
  harness.context.on(
    "request",
    (r) => void (r.url().endsWith("/ort-wasm-simd-threaded.asyncify.wasm") && webgpuBuild.push(r.url())),
  );
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // The first visit: the demo datasets, a run file and a report.json stored; the offline copy saved.
  await page.goto(`${harness.url}#/datasets`);
  await page.getByTestId("add-demo").click();
  await page.getByTestId("demo-result").waitFor({ timeout: 60_000 });
  const run = demoRunExport({ cases: 30, id: "offline-run" });
  const runFile = join(dir, "offline-run.json");
  writeFileSync(runFile, JSON.stringify(run));
  await page.goto(`${harness.url}#/runs`);
  await page.getByTestId("import-runs").setInputFiles(runFile);
  await page.getByTestId("runs-message").waitFor({ timeout: 60_000 });
  await page.goto(`${harness.url}#/report`);
  await page.getByTestId("open-report").locator('input[type="file"]').first().setInputFiles(REPORT);
  await page.getByTestId("report-end").waitFor({ timeout: 60_000 });
  const online = await askFirstCase(page);

  await page.goto(`${harness.url}#/settings`);
  await expect
    .poll(() => page.getByTestId("offline-state").textContent(), { timeout: 120_000 })
    .toMatch(/works offline/);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  const kept = await page.getByTestId("offline-caches").innerText();
  expect(kept).toMatch(/the app, build [0-9a-f]{16}/);

  // On this software adapter nothing fetched the WebGPU build. Choosing WebGPU has the offline copy keep it (the
  // model the playground loaded is reloaded on WebGPU meanwhile); back to the measured engine, it stays kept.
  expect(webgpuBuild).toEqual([]);
  const keptBuild = () =>
    page.evaluate(async (url) => {
      const response = await caches.match(url);
      return response ? (await response.arrayBuffer()).byteLength : 0;
    }, `/${WEBGPU_WASM}`);
  expect(await keptBuild()).toBe(0);
  await page.getByTestId("device-webgpu").check();
  await expect.poll(keptBuild, { timeout: 120_000 }).toBe(statSync(join(harness.outDir, WEBGPU_WASM)).size);
  expect(webgpuBuild.length).toBeGreaterThan(0);
  const loadDone = () =>
    expect.poll(() => page.getByTestId("model-badge").textContent(), { timeout: 120_000 }).not.toMatch(/loading/);
  await loadDone();
  await page.getByTestId("device-auto").check();
  await loadDone();

  // The network off: everything below comes from the service worker, IndexedDB and Cache Storage.
  const failed: string[] = [];
  // A request the page itself gave up on (ERR_ABORTED: a model file read again by a newer load) is not one
  // the network refused.
  page.on("requestfailed", (r) => {
    if (/ERR_ABORTED/.test(r.failure()?.errorText ?? "")) return;
    failed.push(`${r.url()} (${r.failure()?.errorText})`);
  });
  await harness.context.setOffline(true);
  try {
    await page.reload();
    await page.getByTestId("model-badge").waitFor();
    expect(await page.evaluate(() => [navigator.onLine, crossOriginIsolated])).toEqual([false, true]);
    expect(await askFirstCase(page)).toBe(online);
    expect(await page.getByTestId("engine-badge").textContent()).toBe("Engine: WASM");
    // The WebGPU build chosen online is there offline, whole.
    expect(
      await page.evaluate(async (url) => (await (await fetch(url)).arrayBuffer()).byteLength, `/${WEBGPU_WASM}`),
    ).toBe(statSync(join(harness.outDir, WEBGPU_WASM)).size);

    await page.goto(`${harness.url}#/runs/offline-run`);
    await expect.poll(() => page.getByTestId("run-id").textContent()).toBe("offline-run");
    await page.getByTestId("case-table").getByRole("row").nth(1).waitFor();

    await page.goto(`${harness.url}#/report/${encodeURIComponent(report.runId)}`);
    await page.getByTestId("report-end").waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.getByTestId("report-verdicts").textContent())
      .toMatch(/2 SUPPORTED.*0 REFUTED.*2 INCONCLUSIVE/);

    // Every page's code (one chunk each, loaded when the page is first opened) is in the offline copy.
    for (const route of ROUTES) {
      await page.goto(`${harness.url}${route.pattern.replace(/[[?].*$/, "")}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 30_000 });
      expect(await page.getByTestId("page-load-error").count(), route.pattern).toBe(0);
    }
  } finally {
    await harness.context.setOffline(false);
  }
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});
