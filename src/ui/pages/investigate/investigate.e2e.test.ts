/**
 * The Investigate page against the CLI: the loop M1→M5 runs in the page (the model worker, WASM) on a stable
 * sample of 200 demo POPE cases, the page is reloaded while M1 labels them and the investigation is resumed (the
 * labels already stored are read back, not judged again), and its verdicts, hypotheses and repair rungs must equal
 * `evalrx investigate` run on the same sample, seed, holdout and ceiling. The ceiling is L1 (two prompt rewrites):
 * it exercises M5 at the smallest cost. Set INVESTIGATE_SCREENS=<dir> to also write screenshots of the page.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseEventLines, type RunEvent } from "../../../agent/events.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
const screens = process.env["INVESTIGATE_SCREENS"];
const SAMPLE = 600;
const SEED = 3;
const CEILING = "L1";

let harness: BrowserHarness;
let dir: string;
let cliEvents: RunEvent[];
let cliReport: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-investigate-e2e-"));
  const out = join(dir, "cli");
  // The CLI's answer on the same sample, computed while the app builds.
  [harness] = await Promise.all([
    startBrowserHarness(),
    exec(
      process.execPath,
      [
        join(ROOT, "src/node/bin.mjs"),
        "investigate",
        "--sample",
        String(SAMPLE),
        "--seed",
        String(SEED),
        "--holdout",
        "0.4",
        "--max-tier",
        CEILING,
        "--out",
        out,
        // The page's browser profile holds no lessons: the CLI reads none either, so neither reorders its work.
        "--lessons",
        "none",
      ],
      { cwd: ROOT, encoding: "utf8", timeout: 240_000 },
    ),
  ]);
  cliEvents = parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8"));
  cliReport = readFileSync(join(out, "report.json"), "utf8");
}, 300_000);
afterAll(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function shot(page: Page, name: string) {
  if (!screens) return;
  mkdirSync(screens, { recursive: true });
  await page.screenshot({ path: join(screens, `${name}.png`), fullPage: true });
}

/** What both sides must agree on: the frozen hypotheses, their sealed verdicts, and each repair rung's counts. */
function outcome(events: readonly RunEvent[]) {
  const of = (type: string) => events.filter((e) => e.type === type).map((e) => e.payload);
  return {
    // The same cases (the fingerprints differ: the page's cases name their images by content hash, the CLI's by path).
    data: of("data.loaded").map((p) => p["n"]),
    labels: of("probe.finished").map((p) => ({ cases: p["cases"], failures: p["failures"] })),
    hypotheses: of("hypothesis.stated").map((p) => ({ id: p["id"], signal: p["signal"] })),
    verdicts: of("hypothesis.decided").map((p) => ({
      id: p["id"],
      verdict: p["verdict"],
      p: (p["association"] as { p: number }).p,
    })),
    rungs: of("repair.tested").map((p) => ({
      candidate: p["candidate"],
      fixed: p["fixed"],
      broken: p["broken"],
      validated: p["validated"],
    })),
    finished: of("run.finished").map((p) => p["verdicts"]),
  };
}

it("runs the investigation in the page, resumes it after a reload during M1, and reaches the CLI's verdicts", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // Nothing stored yet: the form says where the data comes from.
  await page.goto(`${harness.url}#/investigate`);
  await page.getByText("No dataset is stored yet").waitFor();
  await shot(page, "investigate-empty");
  // With nothing to investigate, nothing is loaded.
  expect(await page.getByTestId("model-badge").textContent()).toBe("Model: none");
  await page.goto(harness.url);
  await page.getByTestId("library-add-demo").click();
  await page.getByText(/\b3\b datasets/).waitFor({ timeout: 120_000 });

  await page.goto(`${harness.url}#/investigate`);
  await page.getByTestId("investigate-dataset").selectOption("pope");
  await page.getByTestId("investigate-sample").fill(String(SAMPLE));
  await page.getByTestId("investigate-seed").fill(String(SEED));
  await page.getByTestId("investigate-holdout").fill("0.4");
  await page.getByTestId("investigate-ceiling").selectOption(CEILING);
  await expect.poll(() => page.getByTestId("investigate-plan").textContent()).toContain(`${SAMPLE} cases`);
  // A wrong field says which and how to mend it; Start waits for a valid plan.
  await page.getByTestId("investigate-holdout").fill("1.5");
  await expect
    .poll(() => page.getByTestId("investigate-form-error").textContent())
    .toContain("holdout: a share strictly between 0 and 1");
  expect(await page.getByTestId("start-investigation").isDisabled()).toBe(true);
  await page.getByTestId("investigate-holdout").fill("0.4");
  await shot(page, "investigate-form");
  // The form loaded the bundled model while it was filled in: Start begins with it loaded.
  await expect
    .poll(() => page.getByTestId("model-badge").textContent(), { timeout: 120_000 })
    .toBe("Model: bundled:tiny-vlm");
  await page.getByTestId("start-investigation").click();

  // The run's own page: the rail follows the log, M1 labels the cases; reload part way through the labelling.
  await page.waitForURL(/#\/investigate\/investigate-/, { timeout: 120_000 });
  const runId = decodeURIComponent(new URL(page.url()).hash.split("/")[2]!);
  const numbers = page.getByTestId("investigation-progress-numbers");
  const doneNow = async () => Number((await numbers.textContent())?.trim().split(/\s/)[0]?.replace(/\D/g, ""));
  await expect.poll(doneNow, { timeout: 120_000, interval: 100 }).toBeGreaterThanOrEqual(5);
  await shot(page, "investigate-m1");
  // Reloaded at once: the labelling of 600 cases takes a second or two, and the reload must land inside it. The
  // page is read in one go, from inside it, the moment 20 cases are labelled (a poll from the test and three
  // reads over the protocol took a good part of the labelling on their own).
  const seen = (await (
    await page.waitForFunction(
      () => {
        const text = (id: string) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? "";
        const done = Number(text("investigation-progress-numbers").trim().split(/\s/)[0]?.replace(/\D/g, ""));
        return done >= 20 && { done, what: text("investigation-progress"), m1: text("stage-M1-state") };
      },
      undefined,
      { polling: "raf", timeout: 120_000 },
    )
  ).jsonValue()) as { done: number; what: string; m1: string };
  await page.reload();
  const before = seen.done;
  expect(before).toBeLessThan(SAMPLE);
  expect(seen.what).toContain("labelling");
  expect(seen.m1).toContain("running");

  // After the reload nobody holds the writer: interrupted, with Resume.
  await expect
    .poll(() => page.getByTestId("investigation-status").textContent(), { timeout: 30_000 })
    .toBe("interrupted");
  expect(await page.getByTestId("stage-M1-state").textContent()).toContain("stopped");
  await page.getByTestId("resume-investigation").click();
  // The resumed labelling starts from what was stored, not from 0: no stored case is judged again. (Read with its
  // label in one go: once the labelling is done the numbers count the probing, from 0.)
  await numbers.waitFor({ timeout: 60_000 });
  const resumed = await page.evaluate(() => ({
    what: document.querySelector('[data-testid="investigation-progress"]')?.textContent ?? "",
    numbers: document.querySelector('[data-testid="investigation-progress-numbers"]')?.textContent ?? "",
  }));
  if (resumed.what.includes("labelling"))
    expect(Number(resumed.numbers.trim().split(/\s/)[0]?.replace(/\D/g, ""))).toBeGreaterThanOrEqual(before);

  await expect
    .poll(() => page.getByTestId("investigation-status").textContent(), { timeout: 240_000, interval: 500 })
    .toBe("finished");
  await page.getByTestId("investigation-finished").waitFor();
  expect(await page.getByTestId("open-report").getAttribute("href")).toBe(`#/report/${encodeURIComponent(runId)}`);
  await shot(page, "investigate-finished");
  for (const s of ["M1", "M2", "M3", "M4", "M5"])
    expect(await page.getByTestId(`stage-${s}-state`).textContent()).toMatch(/^done/);

  // Each stage's panel, as the rail opens it.
  await page.getByTestId("stage-rail").locator('[data-stage="M1"]').click();
  expect(await page.getByTestId("m1-labels").textContent()).toMatch(new RegExp(`\\d+ of ${SAMPLE} cases fail`));
  expect(await page.getByTestId("m1-analyzers").locator("tbody tr").count()).toBeGreaterThan(3);
  await page.getByTestId("stage-rail").locator('[data-stage="M2"]').click();
  await page.getByTestId("m2-figure").waitFor();
  expect(await page.getByTestId("m2-summary").textContent()).toContain("e-BH");
  await shot(page, "investigate-m2");
  await page.getByTestId("stage-rail").locator('[data-stage="M3"]').click();
  const cards = page.getByTestId("m3-cards").locator("li");
  expect(await cards.count()).toBeGreaterThan(0);
  expect(await cards.first().textContent()).toContain("Refuted if");
  await page.getByTestId("stage-rail").locator('[data-stage="M4"]').click();
  await page.getByTestId("m4-verdicts").waitFor();
  await page.getByTestId("stage-rail").locator('[data-stage="M5"]').click();
  await page.getByTestId("m5-rungs").waitFor();
  await shot(page, "investigate-m5");

  // The files the CLI writes, downloaded from the page: the log of the resumed attempt and the report folded
  // from it equal the CLI's on everything that decides.
  const download = async (name: string) => {
    const [file] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: `Download ${name}` }).click(),
    ]);
    return readFileSync((await file.path())!, "utf8");
  };
  const pageEvents = parseEventLines(await download("events.jsonl"));
  expect(pageEvents.map((e) => e.type)).toContain("run.resumed");
  const pageOutcome = outcome(pageEvents);
  expect(pageOutcome).toEqual(outcome(cliEvents));
  expect(pageOutcome.verdicts.length).toBeGreaterThan(0);
  expect(pageOutcome.rungs.length).toBeGreaterThan(0);
  const verdicts = (report: string) =>
    (JSON.parse(report) as { hypotheses: { id: string; signal: string; verdict: string }[] }).hypotheses.map(
      (h) => `${h.id} ${h.signal} ${h.verdict}`,
    );
  expect(verdicts(await download("report.json"))).toEqual(verdicts(cliReport));
  // The finished line names the same verdicts.
  const finished = (await page.getByTestId("investigation-finished").textContent())!;
  for (const v of pageOutcome.verdicts) expect(finished).toContain(`${String(v.id)} ${String(v.verdict)}`);
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 420_000);
