import { afterAll, beforeAll, expect, it } from "vitest";
import { cpSync, mkdtempSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { startHubServer, type HubServer } from "../../../node/hub-server.ts";
import { REPO_ROOT } from "../../../models/load.node.ts";
import { ENGINE_CHECKS_KEY } from "../../app/model-summary.ts";

let harness: BrowserHarness;
let hub: HubServer;
let page: Page;
let folders: string;
const errors: string[] = [];

beforeAll(async () => {
  [harness, hub] = await Promise.all([
    startBrowserHarness(),
    startHubServer({
      "evalrx/tiny-lm": `${REPO_ROOT}models/tiny-lm`,
      "evalrx/tiny-vlm": `${REPO_ROOT}models/tiny-vlm`,
    }),
  ]);
  folders = mkdtempSync(join(tmpdir(), "evalrx-folders-"));
  page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  page.on("pageerror", (error) => errors.push(error.message));
  // Every file-progress bar that was ever on screen, by path: a fast load shows its bars for a moment only.
  await page.addInitScript(`
    window.__fileBars = [];
    new MutationObserver(() => {
      for (const bar of document.querySelectorAll('[data-testid="file-progress"]'))
        if (!window.__fileBars.includes(bar.dataset.path)) window.__fileBars.push(bar.dataset.path);
    }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-path"] });
  `);
});
afterAll(async () => {
  await Promise.all([harness?.close(), hub?.close()]);
  if (folders) rmSync(folders, { recursive: true, force: true });
});

const card = (name: string) => page.locator(`[data-testid="model-card"][data-model="${name}"]`);

/** The paths of every file-progress bar shown since the page was last loaded. */
const barsSeen = () => page.evaluate(() => (window as unknown as { __fileBars: string[] }).__fileBars);

/** Waits until the card says loaded, or fails at once with the page's load failure (never waits out a failed load). */
async function loaded(name: string, timeout: number): Promise<void> {
  const badge = card(name).getByTestId("model-loaded-badge");
  await badge.or(page.getByTestId("load-failure")).first().waitFor({ timeout });
  if (!(await badge.isVisible()))
    throw new Error(`${name} did not load: ${await page.getByTestId("load-failure").textContent()}`);
}

/** A copy of a bundled model's folder under a new name, to be changed by the test. */
function folderCopy(model: string, name: string): string {
  const dir = join(folders, name);
  cpSync(`${REPO_ROOT}models/${model}`, dir, { recursive: true });
  return dir;
}

it("shows the engine check's choice with its numbers: WASM on SwiftShader, which is not measured (nor its WebGPU build fetched) until Measure again", async () => {
  // Every request for ONNX Runtime's WebGPU build (the page's and its workers').
  const webgpuBuild: string[] = [];
  page
    .context()
    .on(
      "request",
      (r) => void (/\/ort-wasm-simd-threaded\.asyncify\.wasm$/.test(r.url()) && webgpuBuild.push(r.url())),
    );
  await page.goto(`${harness.url}#/settings`);
  await page.getByTestId("engine-check-device").waitFor({ timeout: 150_000 });
  expect(await page.getByTestId("engine-check-device").textContent()).toBe("WASM");
  // Headless Chromium's adapter is SwiftShader (a software fallback adapter): the startup check leaves it out, and
  // says so wherever the engine is shown.
  const software =
    "the WebGPU adapter is software (google swiftshader, drawn on the CPU, where WebGPU runs slower than WASM as a rule), so it was not measured and ONNX Runtime's WebGPU build was not downloaded";
  expect(await page.getByTestId("backend").textContent()).toMatch(/^Backend: WASM — WASM \([\d.]+ ms per forward\): /);
  expect(await page.getByTestId("backend").textContent()).toContain(software);
  expect(await page.getByTestId("engine-check-webgpu").textContent()).toContain(software);
  expect(await page.getByTestId("engine-badge").textContent()).toBe("Engine: WASM");
  expect(await page.getByTestId("engine-badge").getAttribute("title")).toContain(software);
  expect(webgpuBuild).toEqual([]);
  // Remembered: after a reload the same check (same time) is shown without measuring again.
  const measured = await page.getByTestId("engine-check").textContent();
  await page.reload();
  await page.getByTestId("engine-check-device").waitFor({ timeout: 30_000 });
  expect(await page.getByTestId("engine-check").textContent()).toBe(measured);
  // Measure again measures the software adapter too (its WebGPU build fetched now): slower than WASM, whatever its
  // logits.
  await page.getByTestId("measure-again").click();
  await expect
    .poll(() => page.getByTestId("backend").textContent(), { timeout: 150_000 })
    .toMatch(
      /^Backend: WASM — WASM is faster here: [\d.]+ ms per forward against [\d.]+ ms on WebGPU \(logits agree: max \|Δ\| [\d.e+-]+ ≤ [\d.e+-]+, 0\.2% of the largest \|logit\|\)$/,
    );
  expect(await page.getByTestId("engine-check-webgpu").textContent()).toMatch(/swiftshader/i);
  expect(webgpuBuild.length).toBeGreaterThan(0);
  // The user can insist on an engine; the choice is remembered, and the measured one is still shown.
  await page.getByTestId("device-webgpu").check();
  await page.reload();
  await page.getByTestId("engine-check-device").waitFor({ timeout: 30_000 });
  expect(await page.getByTestId("device-webgpu").isChecked()).toBe(true);
  expect(await page.getByTestId("engine-badge").textContent()).toBe("Engine: WebGPU");
  expect(await page.getByTestId("engine-check-reason").textContent()).toMatch(/^WASM is faster here/);
  await page.getByTestId("device-auto").check();
  expect(await page.getByTestId("engine-badge").textContent()).toBe("Engine: WASM");
});

it("loads the bundled tiny-vlm from the Models page: spec, capabilities, attention found, size, engine", async () => {
  await page.goto(`${harness.url}#/models`);
  const vlm = card("bundled:tiny-vlm");
  await vlm.getByTestId("load").click();
  await vlm.getByTestId("model-loaded-badge").waitFor({ timeout: 60_000 });
  expect(await vlm.getByTestId("model-spec").textContent()).toContain("6 × 6 tokens (48 × 48 px)");
  expect(await vlm.getByTestId("model-attention").getAttribute("data-state")).toBe("found");
  expect(await vlm.getByTestId("model-capabilities").textContent()).toMatch(/^answers, logits, attention/);
  expect(await vlm.getByTestId("model-size").textContent()).toMatch(/^[\d.]+ (KB|MB)$/);
  expect(await vlm.getByTestId("model-engine").textContent()).toMatch(/^WASM — WASM is faster here/);
  expect(await page.getByTestId("model-status").textContent()).toContain("bundled:tiny-vlm");
  await page.getByTestId("unload-in-use").click();
  await page.getByTestId("model-status-empty").waitFor();
});

it("opens a folder of ONNX files from the folder picker, keeps it, and loads it again after a reload", async () => {
  await page.goto(`${harness.url}#/models`);
  const dir = folderCopy("tiny-lm", "my-tiny-lm");
  await page.getByLabel(/choose a folder$/).setInputFiles(dir);
  const mine = card("files:my-tiny-lm");
  await mine.getByTestId("model-loaded-badge").waitFor({ timeout: 60_000 });
  expect(await mine.getByTestId("model-attention").getAttribute("data-state")).toBe("found");
  expect(await mine.textContent()).toContain("your folder, kept in this browser");
  await page.reload();
  await mine.getByTestId("load").click();
  await mine.getByTestId("model-loaded-badge").waitFor({ timeout: 60_000 });
  expect(await page.getByTestId("model-status").textContent()).toContain("files:my-tiny-lm");
});

it("an unreadable folder names the missing or broken file, and nothing is kept", async () => {
  await page.goto(`${harness.url}#/models`);
  const missing = folderCopy("tiny-lm", "no-tokenizer");
  rmSync(join(missing, "tokenizer.json"));
  await page.getByLabel(/choose a folder$/).setInputFiles(missing);
  await page.getByTestId("folder-problems").waitFor();
  expect(await page.getByTestId("folder-problems").textContent()).toContain("no-tokenizer: tokenizer.json is missing");

  const broken = folderCopy("tiny-vlm", "broken-vlm");
  truncateSync(join(broken, "onnx/decoder_model_merged.onnx"), 1000);
  await page.getByLabel(/choose a folder$/).setInputFiles(broken);
  await page.getByText(/broken-vlm: .*onnx\/decoder_model_merged\.onnx/).waitFor({ timeout: 30_000 });
  expect(await card("files:no-tokenizer").count()).toBe(0);
  expect(await card("files:broken-vlm").count()).toBe(0);
});

it("loads a hub id from a hub-shaped server with a progress bar per file, beside a first visit's engine check, and the second load reads nothing from it", async () => {
  // A first visit: nothing remembered, so the engine check runs in the model worker while these loads do (on
  // SwiftShader its WASM part only: a software adapter is left out); transformers.js runs on the WebGPU build.
  await page.goto(`${harness.url}#/settings`);
  await page.evaluate((key) => localStorage.removeItem(key), ENGINE_CHECKS_KEY);
  await page.reload();
  await page.getByTestId("engine-check-pending").waitFor({ timeout: 30_000 });
  await page.getByTestId("hub-address-input").fill(`${hub.url}/`);
  await page.getByTestId("hub-address-save").click();
  expect(await page.getByTestId("hub-address-current").textContent()).toBe(hub.url);

  // Negotiation first: transformers.js cannot give attention, so the load is refused after reading config.json only.
  await page.goto(`${harness.url}#/models`);
  await page.getByTestId("want-attention").check();
  await page.getByTestId("hub-id").fill("evalrx/tiny-vlm");
  await page.getByTestId("hub-backend").selectOption("transformers");
  await page.getByTestId("hub-load").click();
  await page.getByTestId("hub-problem").waitFor();
  expect(await page.getByTestId("hub-problem").textContent()).toContain(
    "the transformers backend for evalrx/tiny-vlm cannot provide 'attention'",
  );
  expect(hub.requests.filter((r) => r.url.endsWith(".onnx"))).toEqual([]);
  await page.getByTestId("want-attention").uncheck();

  for (const [id, backend] of [
    ["evalrx/tiny-lm", "transformers"],
    ["evalrx/tiny-vlm", "ort"],
  ] as const) {
    await page.getByTestId("hub-id").fill(id);
    await page.getByTestId("hub-backend").selectOption(backend);
    await page.getByTestId("hub-load").click();
    await loaded(`hub:${id}`, 120_000);
    expect(hub.requests.some((r) => r.url.startsWith(`/${id}/resolve/main/onnx/`) && r.status === 302)).toBe(true);
  }
  // A bar per file while it downloaded; the decoders' bytes among them.
  expect((await barsSeen()).filter((path) => path.endsWith(".onnx"))).toEqual(
    expect.arrayContaining(["onnx/model.onnx", "onnx/decoder_model_merged.onnx"]),
  );
  const attention = await card("hub:evalrx/tiny-vlm").getByTestId("model-attention").getAttribute("data-state");
  expect(attention).toBe("found");

  // After a reload, both load again with no request reaching the hub.
  await page.reload();
  const before = hub.requests.length;
  for (const id of ["evalrx/tiny-lm", "evalrx/tiny-vlm"]) {
    await card(`hub:${id}`).getByTestId("load").click();
    await loaded(`hub:${id}`, 120_000);
  }
  expect(hub.requests.slice(before)).toEqual([]);

  // The check measured between the loads, not beside them: WASM did not fail, and the software adapter was left out.
  await page.goto(`${harness.url}#/settings`);
  await page.getByTestId("engine-check-device").waitFor({ timeout: 150_000 });
  expect(await page.getByTestId("backend").textContent()).toMatch(
    /^Backend: WASM — WASM \([\d.]+ ms per forward\): the WebGPU adapter is software \(google swiftshader/,
  );
  expect(await page.getByTestId("engine-check-webgpu").textContent()).toMatch(/swiftshader/i);
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 300_000);
