/**
 * Screenshots of every page of the built app at 1280×900 in the system
 * Chromium — for the README and for looking at what a person sees:
 * `npm run screenshots [-- --out DIR] [--seed] [--max-height PX] [route ...]`. With `--seed` the
 * page first adds the demo datasets and runs two small evals through its own
 * forms, so the pages show data; the routes then include a run, a case, a
 * dataset and the comparison of the two runs.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Page } from "playwright-core";
import { startBrowserHarness } from "../../node/browser-harness.ts";

const { values, positionals } = parseArgs({
  options: {
    out: { type: "string", default: "tmp/screens" },
    wait: { type: "string", default: "1500" },
    seed: { type: "boolean", default: false },
    "max-height": { type: "string" },
  },
  allowPositionals: true,
});

/** Runs one eval through the page's form; returns its run id once it finished. */
async function runEval(page: Page, url: string, name: string, fields: Record<string, string>): Promise<string> {
  await page.goto(`${url}#/runs`);
  const form = page.getByTestId("start-eval");
  // The form opens by itself while no run is stored: the toggle says which it is (aria-expanded) once the runs are read.
  const toggle = page.locator("button[aria-expanded]").filter({ hasText: /^(New eval…|Hide the new eval form)$/ });
  await toggle.waitFor();
  if ((await toggle.getAttribute("aria-expanded")) !== "true") await toggle.click();
  await page.getByTestId("eval-dataset").selectOption("pope");
  for (const [testid, value] of Object.entries(fields)) await page.getByTestId(testid).fill(value);
  await page.getByTestId("eval-name").fill(name);
  await page.getByTestId("eval-plan").filter({ hasNotText: "Reading" }).waitFor();
  await form.click();
  try {
    await page.getByTestId("run-id").waitFor({ timeout: 300_000 });
  } catch (error) {
    await page.screenshot({ path: "tmp/screens-failed.png", fullPage: true });
    throw error;
  }
  const id = (await page.getByTestId("run-id").textContent())!.trim();
  await page
    .getByTestId("run-status")
    .filter({ hasText: /^finished$/ })
    .waitFor({ timeout: 600_000 });
  return id;
}

/** Waits (at most a minute) until the page shows no progress bar (a job or a read still under way) and every image has loaded. */
async function settled(page: Page): Promise<void> {
  await page
    .waitForFunction(
      () =>
        document.querySelectorAll('progress, [role="progressbar"]').length === 0 &&
        !document.body.innerText.includes("Drawing the report") &&
        [...document.images].every((image) => image.complete),
      undefined,
      { timeout: 60_000, polling: 250 },
    )
    .catch(() => console.log(`  (still busy after a minute: ${page.url()})`));
}

/** Writes the page, once settled, as `<name>.png`, and says when it is wider than the window. */
async function shoot(page: Page, name: string): Promise<void> {
  await settled(page);
  // What draws as it comes into view (the report's attention overlays) is drawn before the full-page shot.
  await page.evaluate(async () => {
    for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight / 2) {
      window.scrollTo(0, y);
      await new Promise((done) => setTimeout(done, 120));
    }
    window.scrollTo(0, 0);
  });
  await settled(page);
  await page.waitForTimeout(Number(values.wait));
  const file = join(out, `${name}.png`);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const cut = values["max-height"] ? Math.min(height, Number(values["max-height"])) : height;
  await page.screenshot({ path: file, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: cut } });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  console.log(`${page.url().replace(/^[^#]*/, "")} → ${file}${wide ? "  (WIDER THAN THE WINDOW)" : ""}`);
}

/** Runs a 200-case investigation (ceiling L1) through the page's form; returns its id once finished. */
async function investigate(page: Page, url: string): Promise<string> {
  await page.goto(`${url}#/investigate`);
  await page.getByTestId("investigate-dataset").selectOption("pope");
  await page.getByTestId("investigate-sample").fill("200");
  await page.getByTestId("investigate-seed").fill("3");
  await page.getByTestId("investigate-holdout").fill("0.4");
  await page.getByTestId("investigate-ceiling").selectOption("L1");
  await page.getByTestId("investigate-plan").filter({ hasText: "200 cases" }).waitFor();
  await page.getByTestId("start-investigation").click();
  await page.getByTestId("investigation-finished").waitFor({ timeout: 900_000 });
  return decodeURIComponent(page.url().replace(/^.*#\/investigate\//, ""));
}

/** A file name per screen: `library`, `runs`, `run`, `run-case`, `dataset`, `compare-two-runs`, … */
function screenName(route: string): string {
  const [path = "", query] = route.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  if (parts.length === 0) return "library";
  if (parts[0] === "runs" && parts.length === 2) return "run";
  if (parts[0] === "runs" && parts.length === 3) return "run-case";
  if (parts[0] === "datasets" && parts.length === 2) return "dataset";
  if (parts[0] === "compare" && query) return "compare-two-runs";
  // A share link's payload is kilobytes long: the name keeps its first characters (file names stop at 255 bytes).
  return parts
    .join("-")
    .replace(/[^\w-]+/g, "_")
    .slice(0, 60);
}

const out = resolve(values.out!);
mkdirSync(out, { recursive: true });
const harness = await startBrowserHarness();
try {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  let routes = positionals.length
    ? positionals
    : ["#/", "#/models", "#/datasets", "#/runs", "#/compare", "#/playground", "#/settings", "#/no-such-page"];
  if (values.seed) {
    await page.goto(harness.url);
    await page.getByTestId("library-add-demo").click();
    await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
    const baseline = await runEval(page, harness.url, "pope-greedy", { "eval-sample": "120" });
    const candidate = await runEval(page, harness.url, "pope-greedy", {
      "eval-sample": "120",
      "eval-temperature": "1.2",
      "eval-seed": "3",
    });
    const failing = page.getByTestId("case-table").getByText("fail", { exact: true }).first();
    await failing.waitFor();
    const caseId = (await page
      .getByTestId("case-table")
      .locator('[role="row"]:has-text("fail") a')
      .first()
      .textContent())!;
    const enc = encodeURIComponent;
    routes = [
      ...routes,
      "#/datasets/pope",
      `#/runs/${enc(candidate)}`,
      `#/runs/${enc(candidate)}/${enc(caseId.trim())}`,
      `#/compare?baseline=${enc(baseline)}&candidate=${enc(candidate)}&tolerance=0.03`,
    ];
  }
  for (const route of routes) {
    await page.goto(`${harness.url}${route}`);
    await shoot(page, screenName(route));
  }
  if (values.seed) {
    // Screens that need a person's actions first: one answer explained, one investigation and its report.
    await page.goto(`${harness.url}#/playground?dataset=pope`);
    await page.getByTestId("pg-case").first().click();
    await page.getByTestId("pg-intervened-answer").waitFor({ timeout: 300_000 });
    await shoot(page, "playground-explained");
    const id = await investigate(page, harness.url);
    await page.getByTestId("stage-rail").locator('[data-stage="M2"]').click();
    await shoot(page, "investigation");
    await page.goto(`${harness.url}#/report/${encodeURIComponent(id)}`);
    await page.getByTestId("report-end").waitFor({ timeout: 120_000 });
    await shoot(page, "report");
  }
  if (errors.length) console.log(`page errors:\n${errors.join("\n")}`);
  if (harness.foreignRequests.length) console.log(`foreign requests: ${harness.foreignRequests.join(", ")}`);
} finally {
  await harness.close();
}
