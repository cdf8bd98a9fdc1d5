/**
 * `npm run bench:app`: the page, measured in the system Chromium on the built
 * app, with its Node counterpart measured in the same run. Prints figures and
 * ratios; asserts nothing (these machines are shared and noisy).
 *
 *   shell size     gzip bytes the page loads before any worker starts
 *   100k-case run  the runs page and the case table, route change → rows on screen; long tasks while scrolling
 *   600-case eval  the longest main-thread task during an eval in the page (wall and CPU time); trials/s in the page vs the CLI's runEval (eval.bench.ts)
 *
 * `--only run100k` (or a comma list of shell, run100k, eval, investigate, report, delivery, share) runs those
 * parts alone. The 100k-case table is scrolled twice: dragging its scrollbar (4000 px a frame), then as
 * bench:datasets scrolls its own 100k-case table (drags, flings, jumps). Each scroll is traced: each
 * main-thread task over 50 ms is printed with what it was made of (script, style, layout, paint, GC) and the
 * functions with the most self time in it. `BENCH_BASELINE_APP_DIR` names another build of the app (e.g. built
 * from the commit before a change): both scrolls then run on it and on this build in turn (A B A B), on one
 * origin and one database.
 * `BENCH_TRACE_DIR` keeps the scrolls' traces there.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Page } from "playwright-core";
import { runView } from "../../evals/run-view.ts";
import { summarize } from "../../evals/summary.ts";
import { fingerprintHash, type Fingerprint } from "../../evals/fingerprint.ts";
import { startBrowserHarness } from "../../node/browser-harness.ts";
import { addBaseline } from "../pages/datasets/bench/bench-datasets.node.ts";
import { kindsLine, startTaskKindRecording, stopTaskKindRecording, type TaskKindReport } from "./task-kinds.ts";
import type { ItemRecord, RunExport, RunRecord } from "../../store/types.ts";

const line = (label: string, value: string) => console.log(`${label.padEnd(44)} ${value}`);
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** gzip -9 bytes of the entry chunks and CSS index.html loads, following static imports (not workers, not dynamic imports). */
function shellBytes(outDir: string): { bytes: number; files: string[] } {
  const html = readFileSync(join(outDir, "index.html"), "utf8");
  const queue = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!.replace(/^\//, ""));
  const seen = new Set<string>();
  let bytes = gzipSync(html, { level: 9 }).length;
  while (queue.length) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(outDir, file), "utf8");
    bytes += gzipSync(text, { level: 9 }).length;
    if (!file.endsWith(".js")) continue;
    const dir = file.slice(0, file.lastIndexOf("/") + 1);
    for (const m of text.matchAll(/(?:^|[;\s}])import\s*(?:[\w*{}\s,$]*from\s*)?["'](\.\.?\/[^"']+)["']/g)) {
      const target = new URL(m[1]!, `http://x/${dir}`).pathname.slice(1);
      queue.push(target);
    }
  }
  return { bytes, files: [...seen] };
}

/** A finished run of `n` cases (one yes/no trial each, clusters of 5) as a run file, built in Node. */
function syntheticRun(n: number): RunExport {
  const splits = ["random", "popular", "adversarial"];
  const cases = Array.from({ length: n }, (_, i) => ({
    id: `case-${String(i).padStart(6, "0")}`,
    hash: ((i * 2654435761) >>> 0).toString(16).padStart(12, "0").slice(0, 12),
    tags: i % 7 === 0 ? ["color"] : [],
    split: splits[i % 3]!,
    cluster: `scene-${Math.floor(i / 5)}`,
  }));
  const items: ItemRecord[] = cases.map((c, i) => {
    const passed = (i * 7919) % 100 < 86;
    return {
      runId: "bench-100k",
      caseId: c.id,
      repeat: 0,
      index: i,
      output: passed === (i % 2 === 0) ? "yes" : "no",
      passed,
      checks: [{ name: "yesNo", passed, version: "1", errored: false }],
      latencyMs: 5 + (i % 11),
    };
  });
  const fingerprint: Fingerprint = {
    datasetVersion: "bench-100k",
    caseHashes: Object.fromEntries(cases.map((c) => [c.id, c.hash])),
    evaluators: { yesNo: "1" },
    model: { key: "tiny-vlm" },
    generation: { temperature: 0, maxNewTokens: 3, topK: null, seed: null, stop: null, repeats: 1 },
  };
  const base: RunRecord = {
    id: "bench-100k",
    kind: "eval",
    dataset: "bench-100k",
    model: "tiny-vlm",
    fingerprint: fingerprintHash(fingerprint),
    status: "finished",
    startedAt: "2026-12-01T00:00:00.000Z",
    finishedAt: "2026-12-01T00:20:00.000Z",
    config: {
      eval: "bench-100k",
      repeats: 1,
      clusterField: "cluster",
      evaluators: [{ name: "yesNo", version: "1", kind: "deterministic" }],
      fingerprint,
      cases,
    },
  };
  const summary = summarize(runView(base, items)) as unknown as Record<string, unknown>;
  return {
    format: "evalrx-run",
    version: 1,
    exportedAt: new Date().toISOString(),
    run: { ...base, summary },
    progress: { runId: base.id, done: n, total: n, updatedAt: base.finishedAt! },
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

/** The longest main-thread task since `from` (performance.now() in the page), in ms; 0 when none passed 50 ms. */
async function longestTask(page: Page, from: number): Promise<{ max: number; count: number }> {
  return page.evaluate((t0) => {
    const tasks = (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks.filter(
      (t) => t.start >= t0,
    );
    return { max: Math.max(0, ...tasks.map((t) => t.duration)), count: tasks.length };
  }, from);
}

/** Changes the hash and waits (in the page, frame by frame) until `selector` is on screen; the time it took. */
async function routeTime(page: Page, hash: string, selector: string): Promise<number> {
  return page.evaluate(
    ({ hash, selector }) =>
      new Promise<number>((done, fail) => {
        const t0 = performance.now();
        location.hash = hash;
        const check = () => {
          if (document.querySelector(selector)) return done(performance.now() - t0);
          if (performance.now() - t0 > 30_000) return fail(new Error(`${selector} did not appear in 30 s`));
          requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
    { hash, selector },
  );
}

/**
 * Scrolls the run's case table, one step a frame, then waits 1 s, under a trace that names what each long
 * main-thread task was made of. "drag": as a user dragging its scrollbar does, 4000 px a frame for 120 frames.
 * "mixed": bench:datasets' scroll of its 100k-case table (120 steady frames of 240 px, 60 flings of 6000 px, 60
 * jumps across the whole list), so the two tables are also measured the same way.
 */
async function scrollRunTable(
  page: Page,
  label: string,
  protocol: "drag" | "mixed" = "drag",
): Promise<{ observed: { max: number; count: number }; traced: TaskKindReport }> {
  const browser = page.context().browser()!;
  await page.waitForTimeout(500);
  const scrollFrom = await page.evaluate(() => performance.now());
  const recording = await startTaskKindRecording(browser, page);
  await page.evaluate(async (protocol) => {
    const viewport = document.querySelector('[data-testid="case-table"]') as HTMLElement;
    const max = viewport.scrollHeight - viewport.clientHeight;
    const from = viewport.scrollTop;
    // Each step: a scrollTop, or a share (< 1) of the whole list.
    const steps =
      protocol === "drag"
        ? Array.from({ length: 120 }, (_, i) => from + (i + 1) * 4000)
        : [
            ...Array.from({ length: 120 }, (_, i) => i * 240),
            ...Array.from({ length: 60 }, (_, i) => 30000 + i * 6000),
            ...Array.from({ length: 60 }, (_, i) => ((i * 7919) % 97) / 97),
          ];
    performance.mark("bench-scroll-start");
    for (const s of steps) {
      viewport.scrollTop = s < 1 ? s * max : Math.min(s, max);
      await new Promise((r) => requestAnimationFrame(r));
    }
    await new Promise((r) => setTimeout(r, 1000));
  }, protocol);
  const keep = process.env["BENCH_TRACE_DIR"];
  const traced = await stopTaskKindRecording(
    browser,
    recording,
    "bench-scroll-start",
    keep && join(keep, `${label}.json`),
  );
  return { observed: await longestTask(page, scrollFrom), traced };
}

/** A traced scroll in one line: main-thread CPU, the longest task by wall and CPU time, its time by kind, the load. */
const tracedLine = (t: TaskKindReport) =>
  `main thread ${ms(t.mainCpuMs)} of CPU; longest task ${ms(t.longestWallMs)} wall (${t.overWall50} over 50 ms), ` +
  `${ms(t.longestCpuMs)} CPU (${t.overCpu50} over 50 ms); ${kindsLine(t.kinds)} (load ${load()})`;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0]!;
const PARTS = ["shell", "run100k", "eval", "investigate", "report", "delivery", "share"];
const only = process.argv.includes("--only")
  ? (process.argv[process.argv.indexOf("--only") + 1] ?? "").split(",")
  : undefined;
for (const name of only ?? [])
  if (!PARTS.includes(name)) throw new Error(`--only: no part '${name}' (the parts: ${PARTS.join(", ")})`);
const part = (name: string) => !only || only.includes(name);

const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-app-"));
const harness = await startBrowserHarness();
try {
  console.log("bench:app — the built app in Chromium (headless, this machine), with Node measured in the same run\n");
  if (part("shell")) {
    const shell = shellBytes(harness.outDir);
    line(
      "app shell, gzip (before any worker)",
      `${(shell.bytes / 1024).toFixed(1)} KB (target ≤ 250 KB) in ${shell.files.length} files`,
    );
  }

  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.addInitScript(LONG_TASKS);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  if (part("run100k")) {
    const baselineDir = process.env["BENCH_BASELINE_APP_DIR"];
    const baseline = baselineDir ? addBaseline(harness.outDir, baselineDir) : undefined;
    // As bench:datasets does, first let the page settle: a first visit measures the inference engines (a
    // forward in the model worker) and saves the app's offline copy, seconds of the cores a scroll would share.
    await page.goto(`${harness.url}#/settings`);
    await page.getByTestId("engine-check-device").waitFor({ timeout: 600_000 });
    await page.evaluate(
      `navigator.serviceWorker ? Promise.race([navigator.serviceWorker.ready, new Promise((r) => setTimeout(r, 300000))]) : undefined`,
    );
    // A 100k-case run, imported as a run file through the page.
    const n = 100_000;
    const file = join(dir, "bench-100k.json");
    writeFileSync(file, JSON.stringify(syntheticRun(n)));
    await page.goto(`${harness.url}#/runs`);
    const importStart = Date.now();
    await page.getByTestId("import-runs").setInputFiles(file);
    await page.getByTestId("runs-message").waitFor({ timeout: 600_000 });
    line("import a 100k-case run file in the page", ms(Date.now() - importStart));
    await page.goto(`${harness.url}#/`);
    await page.waitForTimeout(1500);
    const listed = await routeTime(page, "#/runs", '[data-testid="runs-table"] a[href="#/runs/bench-100k"]');
    line("100k-case run: #/ → runs list on screen", `${ms(listed)} (target ≤ 1000 ms)`);
    const table = await routeTime(page, "#/runs/bench-100k", '[data-testid="case-table"] [role="row"] a[href]');
    line("100k-case run: runs list → case table rows", `${ms(table)} (target ≤ 1000 ms)`);
    const scroll = await scrollRunTable(page, "run100k-scroll");
    line(
      "100k-case run: scrolling 480k px of the case table",
      `longest task ${ms(scroll.observed.max)} (${scroll.observed.count} over 50 ms; target none over 50 ms; load ${load()})`,
    );
    const t = scroll.traced;
    line(
      "  main thread meanwhile (trace)",
      `${ms(t.mainCpuMs)} of CPU; longest task ${ms(t.longestWallMs)} wall (${t.overWall50} over 50 ms), ${ms(t.longestCpuMs)} CPU (${t.overCpu50} over 50 ms)`,
    );
    line("  all its tasks by kind, ms of wall time", kindsLine(t.kinds));
    line(
      "  the page's other threads, CPU (trace)",
      t.others.map((o) => `${o.thread} ${ms(o.cpuMs)}`).join("; ") || "none over 20 ms",
    );
    line("  most self time (sampled)", t.functions.join("; ") || "no samples");
    for (const task of t.long.slice(0, 6))
      line(
        `  a ${ms(task.wallMs)} task (${ms(task.cpuMs)} CPU) at ${(task.atMs / 1000).toFixed(1)} s`,
        `${kindsLine(task.kinds)}; ${task.functions.join("; ") || "no samples"}`,
      );
    const mixed = await scrollRunTable(page, "run100k-scroll-mixed", "mixed");
    line(
      "  bench:datasets' scroll of it (240 frames)",
      `longest task ${ms(mixed.observed.max)} (${mixed.observed.count} over 50 ms); trace: ${ms(mixed.traced.mainCpuMs)} of CPU, ` +
        `longest ${ms(mixed.traced.longestCpuMs)} CPU (${mixed.traced.overCpu50} over 50 ms); ${kindsLine(mixed.traced.kinds)} (load ${load()})`,
    );
    // The same scroll on a baseline build and on this one in turn, each page opened afresh on the table.
    const cpu = { baseline: 0, "this build": 0 };
    const mixedCpu = { baseline: 0, "this build": 0 };
    for (const round of baseline ? [0, 1] : [])
      for (const [build, path] of [
        ["baseline", baseline!],
        ["this build", "/"],
      ] as const) {
        await page.goto(`${harness.url}${path}#/runs/bench-100k`);
        await page.locator('[data-testid="case-table"] [role="row"] a[href]').first().waitFor({ timeout: 60_000 });
        const pair = await scrollRunTable(page, `run100k-scroll-${build.replace(" ", "-")}-${round + 1}`);
        cpu[build] += pair.traced.mainCpuMs;
        line(`  scroll on ${build}, round ${round + 1}`, tracedLine(pair.traced));
        const other = await scrollRunTable(
          page,
          `run100k-scroll-mixed-${build.replace(" ", "-")}-${round + 1}`,
          "mixed",
        );
        mixedCpu[build] += other.traced.mainCpuMs;
        line(`  mixed scroll on ${build}, round ${round + 1}`, tracedLine(other.traced));
      }
    if (baseline)
      line(
        "  scroll, this build / baseline",
        `main-thread CPU ${(cpu["this build"] / cpu.baseline).toFixed(2)}× dragging, ${(mixedCpu["this build"] / mixedCpu.baseline).toFixed(2)}× bench:datasets' scroll (2 each, alternated)`,
      );
  }

  if (part("eval") || part("investigate")) {
    // A returning user's browser beside this one (a profile on disk that visited before): the page's first eval and
    // the investigation are measured in both.
    const { benchInvestigateVisits, returningVisit } = await import("./investigate.bench.ts");
    const returning = await returningVisit(harness.outDir);
    try {
      if (part("eval")) await (await import("./eval.bench.ts")).benchEval(harness, line, returning.visit.harness);
      if (part("investigate")) await benchInvestigateVisits(harness, returning.visit, line);
    } finally {
      await returning.visit.harness.close();
    }
  }
  if (part("report")) await (await import("./report-render.bench.ts")).benchReportRender(harness, line);
  if (part("delivery")) await (await import("./delivery.bench.ts")).benchDelivery(harness, line);
  if (part("share")) await (await import("./share.bench.ts")).benchShare(harness, line);
  if (errors.length) console.log(`page errors: ${errors.join(" | ")}`);
  if (harness.foreignRequests.length)
    console.log(`requests that left the machine: ${harness.foreignRequests.join(", ")}`);
} finally {
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
}
