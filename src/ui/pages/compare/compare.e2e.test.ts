/**
 * The Compare page against the CLI: two runs recorded by the CLI's own runEval into a file store are
 * exported as run files, imported through the Runs page, and compared in the page; the verdict and the
 * interval must equal `evalrx gate <candidate file> --baseline <baseline file> --tolerance T --json`, at
 * two tolerances, and so must Calibrate (`evalrx calibrate`) and Power (`evalrx power --runs`).
 * Set COMPARE_SCREENS=<dir> to also write the screenshots of #/compare (empty, passing pair, failing pair).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { FailureCase } from "../../../core/index.ts";
import { runEval, yesNo } from "../../../evals/index.ts";
import { ScriptedModel } from "../../../evals/testing.ts";
import { percent, points } from "../../../figures/format.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { FileStore } from "../../../store/files.node.ts";

const exec = promisify(execFile);
const bin = fileURLToPath(new URL("../../../node/bin.mjs", import.meta.url));
const screens = process.env["COMPARE_SCREENS"];

let harness: BrowserHarness;
let dir: string;
const files: Record<string, string> = {};
const cliAnswers: Record<string, Record<string, unknown>> = {};
/** The power the page is asked for below (a 25-point drop at the 20-point tolerance then in force). */
const POWER_FLAGS = "--drop 0.25 --tolerance 0.2 --repeats 1 --simulations 400";

// 200 cases. base fails 180..199 (90%); "regressed" also fails 150..179 (30 regressed: a fail at 3 points);
// "tweak" passes 180..184 (5 fixed, none regressed: a pass); "base-aa" is base run again with one case flipped.
const cases: FailureCase[] = Array.from({ length: 200 }, (_, i) => ({
  id: `c${String(i).padStart(3, "0")}`,
  input: { prompt: `question ${i}` },
  expected: "yes",
  tags: [],
  status: "active",
  meta: {},
}));
const index = (prompt: string) => Number(prompt.split(" ")[1]);
const RUNS: Record<string, (i: number) => boolean> = {
  base: (i) => i >= 180,
  regressed: (i) => i >= 150,
  tweak: (i) => i >= 185,
  "base-aa": (i) => i >= 180 || i === 7,
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-compare-e2e-"));
  const store = await FileStore.open(join(dir, "store"));
  let minute = 0;
  for (const [id, fails] of Object.entries(RUNS)) {
    const model = new ScriptedModel((p) => (fails(index(p)) ? "no" : "yes"), 0, "scripted-vlm");
    await runEval({ store, dataset: { id: "toy", cases }, model, evaluators: [yesNo()], runId: id, evalKey: "toy" });
    const data = await store.exportRun(id);
    // Distinct start times, in this order, so "newest" means something on the page.
    const run = { ...data.run, startedAt: `2026-02-01T10:${String(minute++).padStart(2, "0")}:00.000Z` };
    files[id] = join(dir, `${id}.run.json`);
    writeFileSync(files[id], JSON.stringify({ ...data, run }));
  }
  // The CLI's answers on the same files, computed while the app builds.
  const gateArgs = (candidate: string, tolerance: string) => [
    "gate",
    files[candidate]!,
    "--baseline",
    files["base"]!,
    "--tolerance",
    tolerance,
    "--json",
  ];
  [
    harness,
    cliAnswers["failing"],
    cliAnswers["wide"],
    cliAnswers["passing"],
    cliAnswers["calibration"],
    cliAnswers["power"],
  ] = await Promise.all([
    startBrowserHarness(),
    cli(...gateArgs("regressed", "0.03")),
    cli(...gateArgs("regressed", "0.2")),
    cli(...gateArgs("tweak", "0.03")),
    cli("calibrate", files["base"]!, files["base-aa"]!, "--target", "0.2", "--json"),
    cli("power", "--runs", files["base"]!, ...POWER_FLAGS.split(" "), "--json"),
  ]);
});
afterAll(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const r = await exec(bin, args, { cwd: dir, encoding: "utf8", timeout: 120_000 }).catch(
    (e: { stdout?: string; code?: number }) => {
      // gate exits 1 on a fail verdict: its JSON is still the answer.
      if (e.stdout) return { stdout: e.stdout };
      throw e;
    },
  );
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

type GateJson = { verdict: string; comparison: { tests: { metric: string; diff: number; lo: number; hi: number }[] } };

async function shot(page: Page, name: string) {
  if (!screens) return;
  mkdirSync(screens, { recursive: true });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(screens, `${name}.png`), fullPage: true });
}

async function axeViolations(page: Page): Promise<string[]> {
  const axe = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axe);
  return page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run(): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe.run();
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
  });
}

it("compares two imported runs with the CLI's verdict and interval, calibrates and simulates power like the CLI", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // Nothing stored yet: the page says what to do.
  await page.goto(`${harness.url}#/compare`);
  await page.getByText("No runs to compare yet").waitFor({ timeout: 60_000 });
  expect(await page.getByTestId("compare-go-runs").getAttribute("href")).toBe("#/runs");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "compare-empty");

  // The run files, imported through the Runs page.
  await page.goto(`${harness.url}#/runs`);
  await page.getByTestId("import-runs").setInputFiles(Object.values(files));
  await expect.poll(() => page.getByTestId("runs-message").textContent(), { timeout: 60_000 }).toContain("Imported");

  // Failing pair, at 3 points, against the CLI on the same files.
  const failing = cliAnswers["failing"] as GateJson;
  await page.goto(`${harness.url}#/compare?baseline=base&candidate=regressed&tolerance=0.03`);
  const word = page.getByTestId("compare-verdict-word");
  await expect.poll(() => word.textContent(), { timeout: 60_000 }).toBe(failing.verdict.toUpperCase());
  const test = failing.comparison.tests.find((t) => t.metric === "pass")!;
  expect(await page.getByTestId("metric-interval-pass").textContent()).toContain(
    `[${points(test.lo)}, ${points(test.hi)}]`,
  );
  expect(await page.getByTestId("metric-diff-pass").textContent()).toBe(points(test.diff));
  expect(await page.getByTestId("compare-command").textContent()).toBe(
    "evalrx gate regressed.run.json --baseline base.run.json --tolerance 0.03",
  );
  expect(await page.getByTestId("flips-regressed").textContent()).toContain("30");
  expect(await page.getByTestId("compare-case-counts").textContent()).toContain("30 regressed");
  // Cases sorted by regressions, answers side by side (fetched for the rows in view).
  const firstRow = page.getByTestId("compare-cases").getByRole("row").nth(1);
  await expect
    .poll(() => firstRow.textContent(), { timeout: 30_000 })
    .toMatch(/c150.*regressed.*100% passed.*yes.*0% passed.*no/);
  await page.getByTestId("compare-diff-only").uncheck();
  await expect.poll(() => page.getByTestId("compare-cases").getAttribute("aria-rowcount")).toBe("201");
  await page.getByTestId("compare-diff-only").check();
  expect(await page.getByTestId("compare-cases").getAttribute("aria-rowcount")).toBe("31");
  await shot(page, "compare-fail");
  expect(await axeViolations(page)).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);

  // A tolerance typed in the page goes into the URL and changes the verdict as the CLI's does.
  const wide = cliAnswers["wide"] as GateJson;
  await page.getByTestId("compare-tolerance").fill("20");
  await page.getByTestId("compare-tolerance").press("Enter");
  await expect.poll(() => page.url()).toContain("tolerance=0.2");
  await expect.poll(() => word.textContent(), { timeout: 30_000 }).toBe(wide.verdict.toUpperCase());

  // Calibrate the A/A pair as `evalrx calibrate` does.
  const calibration = cliAnswers["calibration"] as { recommendedRepeats: number | null; flipRate: number };
  await page
    .getByTestId("calibrate-panel")
    .getByRole("checkbox", { name: /base-aa —/ })
    .check();
  await page.getByRole("button", { name: "Calibrate 2 runs" }).click();
  const answer = page.getByTestId("calibrate-answer");
  await answer.waitFor({ timeout: 60_000 });
  expect(await answer.textContent()).toContain(
    calibration.recommendedRepeats === null
      ? "No number of repeats"
      : `${calibration.recommendedRepeats} repeat${calibration.recommendedRepeats === 1 ? "" : "s"} per case`,
  );
  expect(await answer.textContent()).toContain(`flip rate ${percent(calibration.flipRate)}`);

  // Power at the baseline's cases, as `evalrx power --runs` computes it.
  await page.getByTestId("power-drop").fill("25");
  await page.getByTestId("power-flip").fill("0");
  await page.getByRole("button", { name: "Simulate the gate" }).click();
  const atRuns = page.getByTestId("power-at-runs");
  await atRuns.waitFor({ timeout: 120_000 });
  expect(await page.getByTestId("power-panel").locator("code").nth(1).textContent()).toBe(
    `evalrx power --runs base.run.json ${POWER_FLAGS}`,
  );
  const powered = cliAnswers["power"] as { power: number };
  expect(await atRuns.textContent()).toContain(`probability ${percent(powered.power)}`);

  // A passing pair, opened from the pickers.
  const passing = cliAnswers["passing"] as GateJson;
  await page.getByTestId("compare-tolerance").fill("3");
  await page.getByTestId("compare-tolerance").press("Enter");
  await page.getByTestId("compare-candidate").selectOption("tweak");
  await expect.poll(() => page.url()).toContain("candidate=tweak");
  await expect.poll(() => word.textContent(), { timeout: 30_000 }).toBe(passing.verdict.toUpperCase());
  await shot(page, "compare-pass");

  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});
