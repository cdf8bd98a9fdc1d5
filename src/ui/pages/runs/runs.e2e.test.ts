import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { FileStore } from "../../../store/files.node.ts";
import type { RunExport } from "../../../store/types.ts";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../../../..");

let harness: BrowserHarness;
let dir: string;
beforeAll(async () => {
  harness = await startBrowserHarness();
  dir = mkdtempSync(join(tmpdir(), "evalrx-runs-e2e-"));
});
afterAll(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The eval both sides run: 50 demo cases, 20 sampled repeats with a fixed seed. Twenty, so that the page's run
 * lasts long enough to be cancelled part way: its progress counts stored trials, which arrive in batches of up
 * to 256 behind the judging, so with 2 repeats (100 trials: one or two batches) the run often finished before
 * the Cancel click landed; 1000 trials are at least four batches.
 */
const CONFIG = {
  name: "pope-e2e",
  dataset: join(ROOT, "public/demo/pope.jsonl"),
  select: { sample: 50 },
  model: "tiny-vlm",
  evaluators: ["yesNo"],
  repeats: 20,
  cluster: true,
  generation: { temperature: 0.7, maxNewTokens: 3, seed: 1 },
};

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

it("runs an eval in the page with progress, cancels it, resumes it after a reload, and gets the CLI's result for the same seed", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // A new user: the demo datasets, from the library page.
  await page.goto(harness.url);
  await page.getByTestId("library-add-demo").click();
  await page.getByText(/\b3\b datasets/).waitFor({ timeout: 120_000 });

  // The form, filled as the CLI's config says.
  await page.goto(`${harness.url}#/runs`);
  await page.getByTestId("eval-dataset").selectOption("pope");
  // A yes/no dataset: the form suggests the POPE-style evaluator (and only it).
  await expect.poll(() => page.getByTestId("evaluator-yesNo").isChecked(), { timeout: 30_000 }).toBe(true);
  expect(await page.getByTestId("evaluator-exact").isChecked()).toBe(false);
  await page.getByTestId("eval-sample").fill("50");
  await page.getByTestId("eval-repeats").fill(String(CONFIG.repeats));
  await page.getByTestId("eval-temperature").fill("0.7");
  await page.getByLabel("Max new tokens").fill("3");
  await page.getByTestId("eval-seed").fill("1");
  await page.getByTestId("eval-name").fill("pope-e2e");
  await page.getByText("are not independent: cluster the intervals").click();
  await expect
    .poll(() => page.getByTestId("eval-plan").textContent(), { timeout: 30_000 })
    .toContain("50 cases × 20 repeats = 1,000 trials");
  await page.getByTestId("start-eval").click();

  // Progress, then Cancel part way.
  const progress = page.getByTestId("run-progress-numbers");
  await progress.waitFor({ timeout: 120_000 });
  const runId = (await page.getByTestId("run-id").textContent())!.trim();
  // Cancel as soon as the first trials are stored, checked and clicked inside the page on every frame: a poll
  // from the test and a click over the protocol took up to a second, three quarters of the run on a fast machine
  // (760 of 1000 trials were judged by the time the click landed in one CI run), and a run that finished first
  // left nothing to resume.
  const cancelledAt = (await (
    await page.waitForFunction(
      () => {
        const judged = Number(
          document.querySelector('[data-testid="run-progress-numbers"]')?.textContent?.split("/")[0],
        );
        const button = [...document.querySelectorAll<HTMLButtonElement>('[data-testid="run-progress"] button')].find(
          (b) => b.textContent?.trim() === "Cancel",
        );
        if (!(judged >= 10) || !button) return false;
        button.click();
        return judged;
      },
      undefined,
      { polling: "raf", timeout: 60_000 },
    )
  ).jsonValue()) as number;
  expect(cancelledAt).toBeLessThan(1000);
  await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 30_000 }).toBe("cancelled");

  // A reload: the run is found again, with what was judged; Resume judges only the rest.
  await page.reload();
  await page.getByTestId("resume-run").click();
  await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 180_000 }).toBe("finished");
  // The head can say finished a moment before the table is read again: until then the summary is the last
  // interim one, marked as such (its own status), never presented as final.
  const summaryLine = page.getByTestId("run-summary");
  await expect.poll(() => summaryLine.getAttribute("data-status"), { timeout: 30_000 }).toBe("finished");
  const summary = (await summaryLine.textContent())?.replace(/\s+/g, " ");
  expect(summary).toContain("50 cases × 20 repeats = 1,000 trials");
  expect(await page.locator("#summary-title").textContent()).not.toContain("so far");

  const pageRun = await exportFromPage(page, runId);
  expect(pageRun.items).toHaveLength(1000);
  expect(pageRun.items[0]!.checks.map((c) => c.name)).toEqual(["yesNo"]);
  expect(new Set(pageRun.items.map((i) => i.index)).size).toBe(1000);
  expect(pageRun.events.map((e) => e.type)).toContain("eval.cancelled");

  // The CLI, same config and seed, on onnxruntime-node.
  const configPath = join(dir, "pope.json");
  writeFileSync(configPath, JSON.stringify(CONFIG));
  const storeDir = join(dir, "store");
  const { stdout } = await run(
    process.execPath,
    [join(ROOT, "src/node/bin.mjs"), "eval", configPath, "--store", storeDir, "--json"],
    {
      cwd: ROOT,
    },
  );
  const cli = JSON.parse(stdout) as { run: string; summary: { pass: { mean: number; lo: number; hi: number } } };
  const store = await FileStore.open(storeDir);
  const cliItems = await store.items(cli.run);
  const key = (i: { caseId: string; repeat: number }) => `${i.caseId}#${i.repeat}`;
  const byKey = new Map(cliItems.map((i) => [key(i), i]));
  for (const item of pageRun.items) {
    const other = byKey.get(key(item));
    expect(other, key(item)).toBeDefined();
    expect({ output: item.output, passed: item.passed }).toEqual({ output: other!.output, passed: other!.passed });
  }
  const pagePass = (pageRun.run.summary as { pass: { mean: number; lo: number; hi: number } }).pass;
  expect(pagePass.mean).toBeCloseTo(cli.summary.pass.mean, 12);
  expect(pagePass.lo).toBeCloseTo(cli.summary.pass.lo, 12);
  expect(pagePass.hi).toBeCloseTo(cli.summary.pass.hi, 12);
  // The page shows the same numbers the CLI printed.
  await page.goto(`${harness.url}#/runs/${encodeURIComponent(runId)}`);
  const passRow = page.getByTestId("run-metrics").locator('tr[data-metric="pass"]');
  await expect
    .poll(() => passRow.textContent(), { timeout: 30_000 })
    .toContain(`${(cli.summary.pass.mean * 100).toFixed(1)}%`);
  // One case whole, with its image from the store; it stays (the case is opened once, not again and again).
  const firstCase = pageRun.items[0]!.caseId;
  await page.goto(`${harness.url}#/runs/${encodeURIComponent(runId)}/${encodeURIComponent(firstCase)}`);
  const image = page.getByTestId("case-detail").locator("img");
  await expect
    .poll(() => image.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth), { timeout: 30_000 })
    .toBeGreaterThan(0);
  const src = await image.getAttribute("src");
  await page.waitForTimeout(1000);
  expect(await image.getAttribute("src")).toBe(src);

  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});

it("a run another tab is judging is shown as such and cannot be resumed twice; when that tab closes, it resumes here with nothing judged twice", async () => {
  const axe = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  const writer = await harness.context.newPage();
  await writer.goto(`${harness.url}#/runs`);
  // With a run stored, the form may start folded behind "New eval…" (it opens when the page knows of no run).
  const fold = writer.getByRole("button", { name: "New eval…" });
  await writer.getByTestId("eval-dataset").or(fold).first().waitFor();
  if (await fold.isVisible()) await fold.click();
  await writer.getByTestId("eval-dataset").selectOption("pope");
  // 400 trials: a second or more of judging (150 took 1.4 s on a 2-core machine), while the reading tab opens and looks.
  await writer.getByTestId("eval-sample").fill("400");
  await writer.getByTestId("eval-name").fill("pope-two-tabs");
  await writer.getByTestId("start-eval").click();
  await writer.getByTestId("run-progress-numbers").waitFor({ timeout: 120_000 });
  const runId = (await writer.getByTestId("run-id").textContent())!.trim();

  const reader = await harness.context.newPage();
  await reader.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  reader.on("pageerror", (e) => errors.push(e.message));
  await reader.goto(`${harness.url}#/runs/${encodeURIComponent(runId)}`);
  await expect
    .poll(() => reader.getByTestId("run-status").textContent(), { timeout: 30_000 })
    .toBe("running elsewhere");
  expect(await reader.getByTestId("resume-run").count()).toBe(0);

  // The writing tab goes away mid-run; its lock goes with it.
  await writer.close();
  await expect.poll(() => reader.getByTestId("run-status").textContent(), { timeout: 30_000 }).toBe("interrupted");
  await reader.getByTestId("resume-run").click();
  await expect.poll(() => reader.getByTestId("run-status").textContent(), { timeout: 300_000 }).toBe("finished");
  const exported = await exportFromPage(reader, runId);
  expect(exported.items).toHaveLength(400);
  expect(new Set(exported.items.map((i) => i.index)).size).toBe(400);

  // The pages that now hold data pass the accessibility scan too.
  for (const route of [`#/runs/${encodeURIComponent(runId)}`, "#/runs", "#/"]) {
    await reader.goto(`${harness.url}${route}`);
    await reader.getByRole("heading", { level: 1 }).first().waitFor();
    await reader.waitForTimeout(800);
    await reader.evaluate(axe);
    const violations = await reader.evaluate(async () => {
      const result = await (
        window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }
      ).axe.run();
      return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id);
    });
    expect(violations, route).toEqual([]);
  }
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});
