/**
 * `npm run bench:compare`: the Compare page on two 100k-case runs, in the system Chromium on the built app,
 * with the same comparison in Node measured in the same run. Prints figures and ratios; asserts nothing.
 *
 *   route → verdict   #/compare?baseline&candidate → the verdict on screen (both runs read and gated in the
 *                     stats worker), and the longest main-thread task meanwhile (target: none over 200 ms)
 *   Node              compareJob on the same two runs (RunViews already built), for the ratio
 *   scrolling         the case list scrolled 480k px: the longest task (target: none over 50 ms)
 *   diff-only         toggling it on 100k cases: the longest task
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { fingerprintHash, type Fingerprint } from "../../../../evals/fingerprint.ts";
import { runView } from "../../../../evals/run-view.ts";
import { summarize } from "../../../../evals/summary.ts";
import { startBrowserHarness } from "../../../../node/browser-harness.ts";
import type { ItemRecord, RunExport, RunRecord } from "../../../../store/types.ts";
import { compareJob } from "../../../../../workers/stats-jobs.ts";

const line = (label: string, value: string) => console.log(`${label.padEnd(52)} ${value}`);
const ms = (x: number) => `${x.toFixed(0)} ms`;
const N = 100_000;

/** A finished 100k-case run as a run file; `fails(i)` says which cases fail. */
function run(id: string, startedAt: string, fails: (i: number) => boolean): RunExport {
  const cases = Array.from({ length: N }, (_, i) => ({
    id: `case-${String(i).padStart(6, "0")}`,
    hash: ((i * 2654435761) >>> 0).toString(16).padStart(12, "0").slice(0, 12),
    tags: [],
  }));
  const items: ItemRecord[] = cases.map((c, i) => {
    const passed = !fails(i);
    return {
      runId: id,
      caseId: c.id,
      repeat: 0,
      index: i,
      output: passed ? "yes" : "no",
      passed,
      checks: [{ name: "yesNo", passed, version: "1", errored: false }],
      latencyMs: 5,
    };
  });
  const fingerprint: Fingerprint = {
    datasetVersion: "bench-compare",
    caseHashes: Object.fromEntries(cases.map((c) => [c.id, c.hash])),
    evaluators: { yesNo: "1" },
    model: { key: "tiny-vlm" },
    generation: { temperature: 0, maxNewTokens: 3, topK: null, seed: null, stop: null, repeats: 1 },
  };
  const record: RunRecord = {
    id,
    kind: "eval",
    dataset: "bench-compare",
    model: "tiny-vlm",
    fingerprint: fingerprintHash(fingerprint),
    status: "finished",
    startedAt,
    finishedAt: startedAt,
    config: {
      eval: "bench-compare",
      repeats: 1,
      evaluators: [{ name: "yesNo", version: "1", kind: "deterministic" }],
      fingerprint,
      cases,
    },
  };
  return {
    format: "evalrx-run",
    version: 1,
    exportedAt: startedAt,
    run: { ...record, summary: summarize(runView(record, items)) as unknown as Record<string, unknown> },
    progress: { runId: id, done: N, total: N, updatedAt: startedAt },
    items,
    events: [],
    scores: [],
    traces: [],
  };
}

// `__name`: tsx names the arrow functions this script passes to page.evaluate; the page needs the helper.
const LONG_TASKS = `
  globalThis.__name = (f) => f;
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
`;

async function longestTask(page: Page, from: number): Promise<{ max: number; count: number }> {
  return page.evaluate((t0) => {
    const tasks = (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks.filter(
      (t) => t.start >= t0,
    );
    return { max: Math.max(0, ...tasks.map((t) => t.duration)), count: tasks.length };
  }, from);
}

const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-compare-"));
// base: 14% of cases fail; cand: the same plus 2% more (a regression the gate must catch).
const base = run("bench-base", "2026-12-01T00:00:00.000Z", (i) => (i * 7919) % 100 < 14);
const cand = run("bench-cand", "2026-12-01T01:00:00.000Z", (i) => (i * 7919) % 100 < 16);
const harness = await startBrowserHarness();
try {
  console.log("bench:compare — two 100k-case runs compared in the page (Chromium, this machine) and in Node\n");
  const files = [base, cand].map((r) => {
    const file = join(dir, `${r.run.id}.run.json`);
    writeFileSync(file, JSON.stringify(r));
    return file;
  });
  const t0 = performance.now();
  const views = [base, cand].map((r) => runView(r.run, r.items));
  const viewsMs = performance.now() - t0;
  const t1 = performance.now();
  const node = compareJob(views[0]!, views[1]!, { tolerance: 0.01 });
  const nodeMs = performance.now() - t1;

  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.addInitScript(LONG_TASKS);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${harness.url}#/runs`);
  await page.getByTestId("import-runs").setInputFiles(files);
  await page.getByTestId("runs-message").waitFor({ timeout: 600_000 });
  await page.goto(`${harness.url}#/`);
  await page.waitForTimeout(1500);

  const from = await page.evaluate(() => performance.now());
  const shown = await page.evaluate(
    () =>
      new Promise<number>((done, fail) => {
        const start = performance.now();
        location.hash = "#/compare?baseline=bench-base&candidate=bench-cand&tolerance=0.01";
        const check = () => {
          if (document.querySelector('[data-testid="compare-cases"] [role="row"]'))
            return done(performance.now() - start);
          if (performance.now() - start > 120_000) return fail(new Error("no verdict in 120 s"));
          requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
  );
  const during = await longestTask(page, from);
  const verdict = await page.getByTestId("compare-verdict-word").textContent();
  line("Node: two RunViews from 100k items each", ms(viewsMs));
  line("Node: compareJob (gate, estimates, 2×2, case columns)", `${ms(nodeMs)} → ${node.gate?.verdict}`);
  line(
    "page: #/ → #/compare verdict and case list on screen",
    `${ms(shown)} → ${verdict} (${(shown / (viewsMs + nodeMs)).toFixed(1)}× Node's views + compare; the page also reads IndexedDB)`,
  );
  line(
    "page: longest main-thread task meanwhile",
    `${ms(during.max)} (${during.count} over 50 ms; target none over 200 ms)`,
  );

  await page.waitForTimeout(500);
  const scrollFrom = await page.evaluate(() => performance.now());
  await page.getByTestId("compare-diff-only").uncheck();
  const toggle = await longestTask(page, scrollFrom);
  line("page: diff-only off (100k rows)", `longest task ${ms(toggle.max)} (${toggle.count} over 50 ms)`);
  const scrolled = await page.evaluate(() => performance.now());
  await page.evaluate(
    () =>
      new Promise<void>((done) => {
        const viewport = document.querySelector('[data-testid="compare-cases"]') as HTMLElement;
        let frames = 0;
        const step = () => {
          viewport.scrollTop += 4000;
          if (++frames < 120) requestAnimationFrame(step);
          else setTimeout(done, 1000);
        };
        requestAnimationFrame(step);
      }),
  );
  const scroll = await longestTask(page, scrolled);
  line(
    "page: scrolling 480k px of the case list",
    `longest task ${ms(scroll.max)} (${scroll.count} over 50 ms; target none over 50 ms)`,
  );
  if (errors.length) console.log(`page errors:\n${errors.join("\n")}`);
} finally {
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
}
