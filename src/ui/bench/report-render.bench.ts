/**
 * The report view of the 600-case demo investigation in the page: the report `evalrx investigate` writes (seed 1,
 * holdout 0.4, ceiling L3b: every section, evidence cases with images and overlays) opened from its file, then
 * read back from the store at `#/report/<id>` — route change to the last section on screen, the longest
 * main-thread task meanwhile — beside the same view and HTML export built in Node in the same run. Called by
 * `npm run bench:app`. `EVALRX_BENCH_REPORT=path/report.json` measures that report instead of running the CLI.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserHarness } from "../../node/browser-harness.ts";
import { demoInvestigationInCli } from "./investigate.bench.ts";
import { startMainThreadTrace, stopMainThreadTrace, taskLine } from "./main-thread-trace.ts";
import { renderReportHtml } from "../../report/html.ts";
import { parseReport } from "../../report/schema.ts";
import { reportView } from "../../report/view.ts";

const ms = (x: number) => `${x.toFixed(0)} ms`;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// `__name`: tsx names the arrow functions passed to page.evaluate; the page needs the helper.
const LONG_TASKS = `
  globalThis.__name = (f) => f;
  window.__reportTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__reportTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
`;

/**
 * Opens the 600-case investigation's report.json in a new tab of `harness` and prints, through
 * `line(label, value)`: file → report on screen, `#/report/<id>` → last section on screen (median of 3), the
 * longest main-thread task while it rendered, and the view + HTML built in Node from the same file.
 */
export async function benchReportRender(
  harness: BrowserHarness,
  line: (label: string, value: string) => void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-report-"));
  const page = await harness.context.newPage();
  try {
    let file = process.env["EVALRX_BENCH_REPORT"];
    if (!file) {
      const out = join(dir, "cli");
      await demoInvestigationInCli(out);
      file = join(out, "report.json");
    }
    const text = readFileSync(file, "utf8");
    const report = parseReport(text);
    const evidence = report.evidence?.hypotheses.reduce((n, h) => n + h.failing.length + h.passing.length, 0) ?? 0;
    const what = `${report.provenance.data.n} cases, ${report.hypotheses.length} hypotheses, ${evidence} evidence cases, ${(text.length / 1024).toFixed(0)} KiB`;

    // Node: the same view, and the HTML export, from the same text (median of 5 after one warm-up).
    const nodeTimes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      renderReportHtml(parseReport(text));
      reportView(parseReport(text), { width: 1000 });
      if (i > 0) nodeTimes.push(performance.now() - t0);
    }

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.addInitScript(LONG_TASKS);
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${harness.url}#/report`);
    await page.getByTestId("open-report").waitFor();
    const openFrom = await page.evaluate(() => performance.now());
    const openStart = Date.now();
    await page.getByTestId("open-report").locator('input[type="file"]').first().setInputFiles(file);
    await page.getByTestId("report-end").waitFor({ timeout: 60_000 });
    const opened = Date.now() - openStart;

    // Stored: from the reports list to the report's last section on screen, timed in the page frame by frame.
    const routes: number[] = [];
    const browser = harness.context.browser()!;
    let routeFrom = 0;
    for (let i = 0; i < 3; i++) {
      await page.evaluate(() => (location.hash = "#/report"));
      await page.getByTestId("reports-table").waitFor({ timeout: 30_000 });
      await page.waitForTimeout(300);
      if (i === 0) {
        routeFrom = await page.evaluate(() => performance.now());
        await startMainThreadTrace(browser, page);
      }
      routes.push(
        await page.evaluate(
          (hash) =>
            new Promise<number>((done, fail) => {
              const t0 = performance.now();
              location.hash = hash;
              const check = () => {
                if (document.querySelector('[data-testid="report-end"]')) return done(performance.now() - t0);
                if (performance.now() - t0 > 30_000) return fail(new Error("the report did not render in 30 s"));
                requestAnimationFrame(check);
              };
              requestAnimationFrame(check);
            }),
          `#/report/${encodeURIComponent(report.runId)}`,
        ),
      );
    }
    const traced = await stopMainThreadTrace(browser);
    const longest = (from: number) =>
      page.evaluate((t0) => {
        const all = (window as unknown as { __reportTasks: { start: number; duration: number }[] }).__reportTasks;
        const since = all.filter((t) => t.start >= t0);
        return { max: Math.max(0, ...since.map((t) => t.duration)), count: since.length };
      }, from);
    const tasks = await longest(openFrom);
    const routeTasks = await longest(routeFrom);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);

    line("report view: the report measured", what);
    line("report view: open report.json → report on screen", ms(opened));
    line(
      "report view: #/report/<id> → last section on screen",
      `${ms(median(routes))} median of 3 (${routes.map(ms).join(", ")}; target ≤ 1000 ms)`,
    );
    line(
      "report view: longest main-thread task",
      `${ms(tasks.max)} from opening the file on (${tasks.count} over 50 ms); ${ms(routeTasks.max)} over the 3 route renders (target ≤ 200 ms)`,
    );
    line("  the route renders in Chromium's trace", taskLine(traced));
    line(
      "report view: page route vs Node (view + HTML)",
      `${ms(median(routes))} vs ${ms(median(nodeTimes))} → ${(median(routes) / median(nodeTimes)).toFixed(1)}×`,
    );
    line("report view: page width at 1280 px", `${width} px${width > 1280 ? " (wider than the window)" : ""}`);
    if (errors.length) console.log(`report view: page errors: ${errors.join(" | ")}`);
  } finally {
    await page.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
