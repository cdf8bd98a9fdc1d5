import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { FileStore } from "../../../store/files.node.ts";
import type { RunExport } from "../../../store/types.ts";

const ROOT = resolve(import.meta.dirname, "../../../..");

let harness: BrowserHarness;
let dir: string;
let companion: ChildProcess | undefined;
let pairingUrl: string;

beforeAll(async () => {
  harness = await startBrowserHarness();
  dir = mkdtempSync(join(tmpdir(), "evalrx-pair-e2e-"));
  // A real `evalrx companion`, told where the app is served so its pairing link opens this page.
  companion = spawn(
    process.execPath,
    [join(ROOT, "src/node/bin.mjs"), "companion", "--app", harness.url, "--store", join(dir, "store")],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  pairingUrl = await new Promise<string>((done, fail) => {
    let out = "";
    companion!.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const link = /pair the page by opening: (\S+)/.exec(out)?.[1];
      if (link) done(link);
    });
    companion!.once("exit", (code) => fail(new Error(`the companion exited (${code}): ${out}`)));
  });
}, 120_000);

afterAll(async () => {
  companion?.kill("SIGTERM");
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function exportFromPage(page: Page, runId: string): Promise<RunExport> {
  await page.goto(`${harness.url}#/runs/${encodeURIComponent(runId)}`);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Export run file" }).click(),
  ]);
  const path = join(dir, `page-${Date.now()}.json`);
  await download.saveAs(path);
  return JSON.parse(readFileSync(path, "utf8")) as RunExport;
}

it("pairs with a real companion from its link and runs the page's eval on it, stored as the page's own run", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // The link the companion printed: the page pairs, and the token leaves the address bar.
  expect(pairingUrl.startsWith(harness.url)).toBe(true);
  await page.goto(pairingUrl, { waitUntil: "domcontentloaded", timeout: 120_000 });
  await page.getByTestId("pair-done").waitFor({ timeout: 60_000 });
  expect(new URL(page.url()).hash).toBe("#/pair");
  expect(await page.getByTestId("companion-state").textContent()).toBe("paired · reachable");
  expect(await page.getByTestId("companion-badge").textContent()).toContain("Companion: 0.1.0");

  // The demo datasets, then the eval form with "Run on: the companion".
  await page.goto(harness.url, { waitUntil: "domcontentloaded", timeout: 120_000 });
  await page.getByTestId("library-add-demo").click();
  await page.getByText(/\b3\b datasets/).waitFor({ timeout: 120_000 });
  await page.goto(`${harness.url}#/runs`);
  await page.getByTestId("eval-dataset").selectOption("pope");
  await expect.poll(() => page.getByTestId("evaluator-yesNo").isChecked(), { timeout: 30_000 }).toBe(true);
  await page.getByTestId("eval-sample").fill("30");
  await page.getByTestId("eval-repeats").fill("2");
  await page.getByTestId("eval-temperature").fill("0.7");
  await page.getByLabel("Max new tokens").fill("3");
  await page.getByTestId("eval-seed").fill("3");
  await expect
    .poll(() => page.getByTestId("eval-plan").textContent(), { timeout: 30_000 })
    .toContain("30 cases × 2 repeats = 60 trials");
  await page.getByTestId("run-on-companion").check();
  await page.getByTestId("start-eval").click();

  await page.getByTestId("run-id").waitFor({ timeout: 60_000 });
  const runId = (await page.getByTestId("run-id").textContent())!.trim();
  expect(runId).toMatch(/companion/);
  await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 120_000 }).toBe("finished");
  // The run page reads the summary again as the last writes are announced.
  await expect
    .poll(async () => (await page.getByTestId("run-summary").textContent())?.replace(/\s+/g, " "), {
      timeout: 30_000,
    })
    .toContain("30 cases × 2 repeats = 60 trials");

  // The page's IndexedDB holds the run the companion made, write for write.
  const pageRun = await exportFromPage(page, runId);
  const store = await FileStore.open(join(dir, "store"));
  try {
    const there = await store.exportRun(runId, { dataset: false });
    expect(pageRun.run).toEqual(there.run);
    expect(pageRun.items).toEqual(there.items);
    expect(pageRun.events.map((e) => [e.seq, e.type])).toEqual(there.events.map((e) => [e.seq, e.type]));
    expect(pageRun.items).toHaveLength(60);
    expect((pageRun.run.config as { page?: unknown }).page).toBeDefined();
  } finally {
    await store.close();
  }
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 300_000);

it("runs an investigation on the companion (Run on: the companion), followed live and stored as the page's own; Cancel on a run's page stops a companion eval", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // Paired by the test before (the pairing is kept in this browser), with the demo datasets stored.
  await page.goto(`${harness.url}#/investigate`, { waitUntil: "domcontentloaded", timeout: 120_000 });
  await page.getByTestId("investigate-dataset").selectOption("pope");
  await page.getByTestId("investigate-sample").fill("60");
  await page.getByTestId("investigate-seed").fill("1");
  await page.getByTestId("investigate-ceiling").selectOption("none");
  await page.getByTestId("run-on-companion").check();
  await expect.poll(() => page.getByTestId("investigate-plan").textContent()).toContain("on the companion");
  if (process.env["PAIR_SCREENS"])
    await page.screenshot({ path: join(process.env["PAIR_SCREENS"], "investigate-run-on.png") });
  await page.getByTestId("start-investigation").click();
  await page.waitForURL(/#\/investigate\/investigate-/, { timeout: 120_000 });
  const runId = decodeURIComponent(new URL(page.url()).hash.replace("#/investigate/", ""));
  await expect
    .poll(() => page.getByTestId("investigation-status").textContent(), { timeout: 240_000, interval: 500 })
    .toContain("finished");
  await page.getByTestId("investigation-finished").waitFor();
  if (process.env["PAIR_SCREENS"])
    await page.screenshot({ path: join(process.env["PAIR_SCREENS"], "investigate-finished.png") });
  // The report the companion folded is where the report page reads it.
  await page.getByTestId("open-report").click();
  await page.waitForURL(/#\/report\//);
  const store = await FileStore.open(join(dir, "store"));
  try {
    const there = await store.getRun(runId);
    expect(there).toMatchObject({ kind: "investigation", status: "finished" });
    expect((await store.events(runId)).at(-1)!.type).toBe("run.finished");
  } finally {
    await store.close();
  }

  // A longer eval on the companion, cancelled from its run page: what was judged is kept, and it says so.
  await page.goto(`${harness.url}#/runs`);
  await page.reload({ waitUntil: "domcontentloaded" });
  await page.getByTestId("eval-dataset").selectOption("pope", { timeout: 60_000 });
  await expect.poll(() => page.getByTestId("evaluator-yesNo").isChecked(), { timeout: 30_000 }).toBe(true);
  await page.getByTestId("eval-repeats").fill("6");
  await page.getByLabel("Max new tokens").fill("3");
  await page.getByTestId("run-on-companion").check();
  await page.getByTestId("start-eval").click();
  await page.getByTestId("companion-run-progress").waitFor({ timeout: 60_000 });
  if (process.env["PAIR_SCREENS"])
    await page.screenshot({ path: join(process.env["PAIR_SCREENS"], "run-on-companion-cancel.png") });
  await page.getByTestId("companion-run-progress").getByRole("button", { name: "Cancel" }).click();
  await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 60_000 }).toBe("cancelled");
  await page.getByText(/Cancelled after \d+ trials; the judged ones are kept/).waitFor({ timeout: 30_000 });
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 400_000);
