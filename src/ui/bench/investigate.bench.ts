/**
 * The 600-case demo investigation (`evalrx investigate` with no arguments: the bundled tiny VLM on the demo POPE
 * set, seed 1, holdout 0.4, ceiling L3b) in the page — the loop in the model worker on ONNX Runtime Web (WASM) —
 * and the same command line in Node, one after the other in one run: wall times, their ratio, the longest
 * main-thread task while the page ran, and whether both reached the same verdicts. Called by `npm run bench:app`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parseEventLines, type RunEvent } from "../../agent/events.ts";
import type { BrowserHarness } from "../../node/browser-harness.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const exec = promisify(execFile);

// `__name`: tsx names the arrow functions passed to page.evaluate; the page needs the helper.
const LONG_TASKS = `
  globalThis.__name = (f) => f;
  window.__investigateTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__investigateTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
`;

const verdictsOf = (events: readonly RunEvent[]) =>
  events
    .filter((e) => e.type === "hypothesis.decided")
    .map((e) => `${String(e.payload["id"])} ${String(e.payload["verdict"])}`)
    .join(", ");

/**
 * Runs the demo investigation in a new tab of `harness` (adding the demo datasets when they are not stored), then
 * `evalrx investigate` in Node, and prints the figures through `line(label, value)`.
 */
export async function benchInvestigate(
  harness: BrowserHarness,
  line: (label: string, value: string) => void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-investigate-"));
  const page = await harness.context.newPage();
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.addInitScript(LONG_TASKS);
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));

    await page.goto(`${harness.url}#/investigate`);
    await page.getByRole("heading", { name: "New investigation" }).waitFor();
    if (await page.getByText("No dataset is stored yet").isVisible()) {
      await page.goto(harness.url);
      await page.getByTestId("library-add-demo").click();
      await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
      await page.goto(`${harness.url}#/investigate`);
    }
    await page.getByTestId("investigate-dataset").selectOption("pope");
    await page.getByTestId("investigate-sample").fill("");
    await page.getByTestId("investigate-seed").fill("1");
    await page.getByTestId("investigate-holdout").fill("0.4");
    await page.getByTestId("investigate-ceiling").selectOption("L3b");
    await page.getByTestId("investigate-plan").filter({ hasText: "600 cases" }).waitFor();
    const from = await page.evaluate(() => performance.now());
    const pageStart = Date.now();
    await page.getByTestId("start-investigation").click();
    // Polled once a second (a locator's wait polls the DOM many times a second: the bench's own main-thread work).
    await page.waitForFunction(
      () => document.querySelector('[data-testid="investigation-status"]')?.textContent?.trim() === "finished",
      undefined,
      { polling: 1000, timeout: 1_800_000 },
    );
    const pageSeconds = (Date.now() - pageStart) / 1000;
    const tasks = await page.evaluate((t0) => {
      const all = (window as unknown as { __investigateTasks: { start: number; duration: number }[] })
        .__investigateTasks;
      const during = all.filter((t) => t.start >= t0);
      return { max: Math.max(0, ...during.map((t) => t.duration)), count: during.length };
    }, from);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download events.jsonl" }).click(),
    ]);
    const pageEvents = parseEventLines(readFileSync((await download.path())!, "utf8"));

    const out = join(dir, "cli");
    const cliStart = Date.now();
    await exec(
      process.execPath,
      [
        join(ROOT, "src/node/bin.mjs"),
        "investigate",
        "--seed",
        "1",
        "--holdout",
        "0.4",
        "--max-tier",
        "L3b",
        "--out",
        out,
      ],
      { cwd: ROOT, encoding: "utf8", timeout: 1_800_000 },
    );
    const cliSeconds = (Date.now() - cliStart) / 1000;
    const cliEvents = parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8"));

    const stageMs = (events: readonly RunEvent[]) =>
      events
        .filter((e) => e.type === "stage.finished")
        .map((e) => `${String(e.payload["stage"])} ${(Number(e.payload["ms"]) / 1000).toFixed(1)}`)
        .join(" · ");
    line(
      "600-case investigation, page (WASM) vs CLI",
      `${pageSeconds.toFixed(1)} s vs ${cliSeconds.toFixed(1)} s → ${(pageSeconds / cliSeconds).toFixed(2)}× (target ≤ 1.5×)`,
    );
    line("  stages in the page, s", stageMs(pageEvents));
    line("  stages in the CLI, s", stageMs(cliEvents));
    line(
      "600-case investigation: longest main-thread task",
      `${tasks.max.toFixed(0)} ms (${tasks.count} over 50 ms; target ≤ 200 ms)`,
    );
    const same = verdictsOf(pageEvents) === verdictsOf(cliEvents);
    line(
      "  verdicts, page vs CLI",
      same ? `the same: ${verdictsOf(pageEvents)}` : `DIFFER: ${verdictsOf(pageEvents)} | ${verdictsOf(cliEvents)}`,
    );
    if (errors.length) line("  page errors", errors.join(" | "));
  } finally {
    await page.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
