import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
/** The first test's eval on the companion: the third calibrates it against a second run of the same eval. */
let firstRunId: string | undefined;

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
  firstRunId = runId;
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
  // With runs stored, the form may start folded behind "New eval…" (it opens when the page knows of no run).
  const fold = page.getByRole("button", { name: "New eval…" });
  await page.getByTestId("eval-dataset").or(fold).first().waitFor({ timeout: 60_000 });
  if (await fold.isVisible()) await fold.click();
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

/** Reads run `runId`, its event count and its report score from the page's own IndexedDB. */
function pageRecords(page: Page, runId: string) {
  return page.evaluate(async (id) => {
    const db = await new Promise<IDBDatabase>((done, fail) => {
      const open = indexedDB.open("evalrx");
      open.onsuccess = () => done(open.result);
      open.onerror = () => fail(open.error);
    });
    const ask = <T>(store: string, fn: (s: IDBObjectStore) => IDBRequest<T>) =>
      new Promise<T>((done, fail) => {
        const request = fn(db.transaction(store).objectStore(store));
        request.onsuccess = () => done(request.result);
        request.onerror = () => fail(request.error);
      });
    const run = await ask<{ kind?: string; status?: string } | undefined>("runs", (s) => s.get(id));
    const events = await ask<number>("events", (s) => s.count(IDBKeyRange.bound([id, -Infinity], [id, Infinity])));
    const report = await ask<{ detail?: { kind?: string } } | undefined>("scores", (s) => s.get([id, "report"]));
    db.close();
    return { kind: run?.kind, status: run?.status, events, report: report?.detail?.kind };
  }, runId);
}

it("calibrates two runs on the companion with the page's own answer, and explores an eval log there into the page's store", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  expect(firstRunId, "the first test's run").toBeDefined();

  // A second run of the first test's eval (same model and settings, another seed): an A/A pair.
  await page.goto(`${harness.url}#/runs`, { waitUntil: "domcontentloaded", timeout: 120_000 });
  const fold = page.getByRole("button", { name: "New eval…" });
  await page.getByTestId("eval-dataset").or(fold).first().waitFor({ timeout: 60_000 });
  if (await fold.isVisible()) await fold.click();
  await page.getByTestId("eval-dataset").selectOption("pope", { timeout: 60_000 });
  await expect.poll(() => page.getByTestId("evaluator-yesNo").isChecked(), { timeout: 30_000 }).toBe(true);
  await page.getByTestId("eval-sample").fill("30");
  await page.getByTestId("eval-repeats").fill("2");
  await page.getByTestId("eval-temperature").fill("0.7");
  await page.getByLabel("Max new tokens").fill("3");
  await page.getByTestId("eval-seed").fill("4");
  await page.getByTestId("run-on-companion").check();
  await page.getByTestId("start-eval").click();
  await page.getByTestId("run-id").waitFor({ timeout: 60_000 });
  const secondRunId = (await page.getByTestId("run-id").textContent())!.trim();
  await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 120_000 }).toBe("finished");

  // Calibrate the pair on the companion, then on this page's stats worker: the same answer.
  const ids = [firstRunId!, secondRunId];
  await page.goto(
    `${harness.url}#/compare?baseline=${encodeURIComponent(ids[0]!)}&candidate=${encodeURIComponent(ids[1]!)}`,
  );
  const panel = page.getByTestId("calibrate-panel");
  for (const id of ids) await panel.getByRole("checkbox", { name: new RegExp(id) }).check({ timeout: 60_000 });
  await page.getByTestId("calibrate-on-companion").check();
  await page.getByRole("button", { name: "Calibrate 2 runs" }).click();
  const answer = page.getByTestId("calibrate-answer");
  await answer.waitFor({ timeout: 60_000 });
  await page.getByTestId("calibrate-figure").locator("svg").waitFor();
  const there = (await answer.textContent())!.replace(/\s+/g, " ");
  expect(there).toMatch(/(\d+ repeats? per case reach|No number of repeats tried reaches) the target/);
  expect(there).toContain("30 shared cases");
  if (process.env["PAIR_SCREENS"]) {
    await panel.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(process.env["PAIR_SCREENS"], "calibrate-on-companion.png") });
  }
  await page.getByTestId("calibrate-on-page").check();
  await page.getByRole("button", { name: "Calibrate 2 runs" }).click();
  await expect.poll(async () => (await answer.textContent())?.replace(/\s+/g, " "), { timeout: 60_000 }).toBe(there);

  // An eval log (a table with a passed column): failures planted on one column, explored on the companion.
  const rows = ["id,prompt,expected,passed,shape,size"];
  for (let i = 0; i < 80; i++) {
    const shape = i % 2 ? "square" : "circle";
    const size = i % 3 ? "small" : "large";
    const passed = shape === "circle" || i % 7 === 0 ? "pass" : "fail";
    rows.push(`log-${String(i).padStart(3, "0")},is there a ${size} ${shape}?,yes,${passed},${shape},${size}`);
  }
  const log = join(dir, "shapes-log.csv");
  writeFileSync(log, `${rows.join("\n")}\n`);
  await page.goto(`${harness.url}#/datasets`);
  await page.locator('[data-testid="dataset-drop"] input[type="file"]:not([webkitdirectory])').setInputFiles(log);
  await page.getByTestId("import-button").click({ timeout: 60_000 });
  await page.getByTestId("import-done").waitFor({ timeout: 60_000 });

  await page.goto(`${harness.url}#/pair`);
  const dataset = page.getByTestId("explore-dataset");
  await expect.poll(() => dataset.locator("option", { hasText: "shapes-log" }).count(), { timeout: 30_000 }).toBe(1);
  await dataset.selectOption({ label: (await dataset.locator("option", { hasText: "shapes-log" }).textContent())! });
  await page.getByTestId("explore-start").click();
  const status = page.getByTestId("explore-status");
  await expect.poll(() => status.textContent(), { timeout: 120_000 }).toContain("finished");
  await status.getByRole("link", { name: "Open its report" }).click();
  await page.waitForURL(/#\/report\//);
  const exploreId = decodeURIComponent(new URL(page.url()).hash.replace("#/report/", ""));
  await page.getByTestId("report-end").waitFor({ timeout: 60_000 });

  // The page's IndexedDB holds the explore run the companion wrote, event for event, with its report.
  const store = await FileStore.open(join(dir, "store"));
  try {
    const events = await store.events(exploreId);
    expect(events.at(-1)!.type).toBe("run.finished");
    expect(await pageRecords(page, exploreId)).toEqual({
      kind: "explore",
      status: "finished",
      events: events.length,
      report: "explore",
    });
  } finally {
    await store.close();
  }
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 300_000);
