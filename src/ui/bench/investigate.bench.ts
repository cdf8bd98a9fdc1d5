/**
 * The 600-case demo investigation (`evalrx investigate` with no arguments: the bundled tiny VLM on the demo POPE
 * set, seed 1, holdout 0.4, ceiling L3b) in the page — the loop in the model worker on ONNX Runtime Web (WASM) —
 * and the same command line in Node, in one run: the CLI; the page on a first visit in the tab that opened the app
 * (ONNX Runtime's wasm compiled in the model worker by the first visit's engine check, before the run), in a new
 * tab of a browser that keeps no compiled code (the wasm compiled during the run), and on a returning visit (a
 * profile on disk whose earlier visit left Chromium's compiled code); the CLI again; wall times, their ratios, the longest main-thread task while the page ran, and whether all reached
 * the same verdicts. Called by `npm run bench:app`.
 * Chromium's "toplevel" trace and V8's profile of the page's main thread run alongside: each long task's wall time
 * beside its CPU time and the functions it ran. `EVALRX_BENCH_WORKER_PROFILE=1` also profiles the workers and
 * prints what the model worker ran in each stage (it slows the worker a little: not for the ratio).
 * `EVALRX_BENCH_PAGE_ONLY=1` stops after the page's lines (no CLI run), and `EVALRX_BENCH_SAMPLE=n` investigates
 * n of the 600 cases: for profiling on a loaded machine, where the whole bench takes half an hour.
 * `EVALRX_BENCH_SHOTS=dir` saves screenshots of the page there: while it runs (once M2 has started) and finished.
 * `EVALRX_BENCH_COPIES=2` runs the page's investigations on two copies of the model (a helper worker; default one).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { parseEventLines, type RunEvent } from "../../agent/events.ts";
import { startBrowserHarness, type BrowserHarness } from "../../node/browser-harness.ts";
import { waitForEngineCheck } from "./engine-check-wait.ts";
import { SETTLED_STATUSES, settledStatus, step } from "./bench-steps.ts";
import { poolTotal } from "./thread-pool-work.ts";
import {
  busyIn,
  profileFunctions,
  startLongTaskRecording,
  startWorkerProfiling,
  stopLongTaskRecording,
  taskFunctions,
  type CpuProfile,
  type TracedTask,
} from "./long-task-profile.ts";

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

/** `evalrx investigate` on the demo set as the page runs it (seed 1, holdout 0.4, ceiling L3b), writing into `out`. */
export async function demoInvestigationInCli(out: string): Promise<void> {
  const args = ["investigate", "--seed", "1", "--holdout", "0.4", "--max-tier", "L3b", "--out", out];
  await exec(process.execPath, [join(ROOT, "src/node/bin.mjs"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 1_800_000,
  });
}

/** One visit of the page the investigation is measured in: its name in the lines, and its browser. */
export interface Visit {
  /** "first visit" (the wasm runtime compiled during the run), "returning visit" (compiled code reused)… */
  readonly label: string;
  readonly harness: BrowserHarness;
  /** The tab to run in, the app already open in it (its model worker with it); absent: a new tab. */
  readonly page?: Page;
}

/**
 * A new user's first visit, in the one tab they opened: a fresh profile on disk opens the app on `appDir`'s build,
 * adds the demo datasets and waits for the engine check (a first visit's reference forwards, in the model worker:
 * ONNX Runtime's wasm is compiled there), then the investigation runs in that tab, in the same model worker. The
 * "first visit" beside it is a new tab of a browser that keeps no compiled code: the wasm compiled during the run.
 */
async function firstVisitInOneTab(appDir: string): Promise<Visit> {
  const harness = await startBrowserHarness({ persistentProfile: true, appDir });
  try {
    const page = await harness.context.newPage();
    await page.goto(harness.url);
    await page.getByTestId("library-add-demo").click();
    await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
    // In-app navigations from here on (the hash changes, the document stays): the same model worker throughout.
    await waitForEngineCheck(page, harness.url, 300_000);
    // The offline copy saved (the service worker active), as it is seconds after a first visit's engine check.
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    return { label: "first visit, the tab that opened the app", harness, page };
  } catch (error) {
    await harness.close();
    throw error;
  }
}

/**
 * A returning user's browser on `appDir`'s build: a profile on disk, whose earlier visit added the demo datasets,
 * ran the engine check and a 100-case eval of the bundled VLM (so ONNX Runtime's wasm was compiled, its hot
 * functions optimised, and Chromium kept that code; the service worker kept the app). Returns the check's line.
 */
export async function returningVisit(appDir: string): Promise<{ visit: Visit; check: string }> {
  const harness = await startBrowserHarness({ persistentProfile: true, appDir });
  const page = await harness.context.newPage();
  try {
    await page.goto(harness.url);
    await page.getByTestId("library-add-demo").click();
    await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
    const check = await waitForEngineCheck(page, harness.url, 300_000);
    // The offline copy kept (the service worker active), as after a user's earlier visit.
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    await page.goto(`${harness.url}#/runs`);
    await page.getByTestId("eval-dataset").selectOption("pope");
    await page.getByTestId("eval-sample").fill("100");
    await page.getByLabel("Max new tokens").fill("3");
    await page.getByTestId("eval-plan").filter({ hasText: "100 cases" }).waitFor();
    await page.getByTestId("start-eval").click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]')?.textContent?.trim() === "finished",
      undefined,
      { polling: 1000, timeout: 600_000 },
    );
    // Chromium writes the compiled code to its cache a few seconds after V8 has optimised enough of it.
    await page.waitForTimeout(10_000);
    return { visit: { label: "returning visit", harness }, check };
  } catch (error) {
    await harness.close();
    throw error;
  } finally {
    if (!page.isClosed()) await page.close();
  }
}

/**
 * The investigation on the three pages `bench:app` compares with the CLI: a new user's first visit in the one tab
 * they opened (a browser started here, closed after), a new tab of `harness` (which keeps no compiled code), and
 * `returning`.
 */
export async function benchInvestigateVisits(
  harness: BrowserHarness,
  returning: Visit,
  line: (label: string, value: string) => void,
): Promise<void> {
  const oneTab = await step("a new user's browser: the app opened, the engine check", () =>
    firstVisitInOneTab(harness.outDir),
  );
  try {
    await benchInvestigate([oneTab, { label: "first visit, a new tab", harness }, returning], line);
  } finally {
    await oneTab.harness.close();
  }
}

/** What one investigation in the page measured. */
interface PageRun {
  readonly label: string;
  readonly seconds: number;
  /** CPU seconds of the page's renderer, its thread pool included. */
  readonly cpu: number;
  readonly events: RunEvent[];
}

/** What one `evalrx investigate` measured. */
interface CliRun {
  readonly seconds: number;
  /** CPU seconds of the process, its threads included. */
  readonly cpu: number;
  readonly events: RunEvent[];
  readonly startedAt: number;
}

/** The demo investigation on the command line, into `out`, timed. */
async function investigateInCli(out: string, when: string): Promise<CliRun> {
  const startedAt = Date.now();
  const cpuBefore = childCpuSeconds();
  await step(`the same investigation in the CLI, ${when}`, () => demoInvestigationInCli(out));
  const seconds = (Date.now() - startedAt) / 1000;
  const cpu = childCpuSeconds() - cpuBefore;
  return { seconds, cpu, events: parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8")), startedAt };
}

/**
 * Runs `evalrx investigate` in Node, then the demo investigation in a new tab of each visit's browser (adding the
 * demo datasets when they are not stored), then the CLI again, and prints the figures through `line(label,
 * value)`: each visit's own lines, then each against the CLI's mean. The CLI runs before and after the pages so
 * that a machine getting busier or quieter over the minutes the bench takes weighs on both sides alike.
 */
export async function benchInvestigate(
  visits: readonly Visit[],
  line: (label: string, value: string) => void,
): Promise<void> {
  const pageOnly = !!process.env["EVALRX_BENCH_PAGE_ONLY"];
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-investigate-"));
  try {
    const before = pageOnly ? undefined : await investigateInCli(join(dir, "cli-before"), "before the pages");
    const runs: PageRun[] = [];
    for (const visit of visits) runs.push(await investigateInPage(visit, line));
    if (!before) return;
    const after = await investigateInCli(join(dir, "cli-after"), "after the pages");
    const cliSeconds = (before.seconds + after.seconds) / 2;
    const cliCpu = (before.cpu + after.cpu) / 2;
    line(
      "600-case investigation in the CLI",
      `${before.seconds.toFixed(1)} s before the pages, ${after.seconds.toFixed(1)} s after: ${cliSeconds.toFixed(1)} s wall, ${cliCpu.toFixed(1)} s CPU (means)`,
    );
    for (const cli of [before, after]) {
      line(
        "  stages in the CLI, s",
        `${stageMs(cli.events)} · ${outsideStages(cli.events, cli.startedAt, cli.seconds)}`,
      );
      line("  M5 candidates in the CLI, s", candidateSeconds(cli.events));
    }
    for (const run of runs)
      line(
        `600-case investigation, page (${run.label}) vs CLI`,
        `${run.seconds.toFixed(1)} s vs ${cliSeconds.toFixed(1)} s → ${(run.seconds / cliSeconds).toFixed(2)}× (target ≤ 1.5×); CPU ${run.cpu.toFixed(1)} s vs ${cliCpu.toFixed(1)} s → ${(run.cpu / cliCpu).toFixed(2)}×`,
      );
    const cliVerdicts = verdictsOf(after.events);
    if (verdictsOf(before.events) !== cliVerdicts)
      line("  verdicts, CLI before vs after", `DIFFER: ${verdictsOf(before.events)} | ${cliVerdicts}`);
    for (const run of runs) {
      const same = verdictsOf(run.events) === cliVerdicts;
      line(
        `  verdicts, page (${run.label}) vs CLI`,
        same ? `the same: ${cliVerdicts}` : `DIFFER: ${verdictsOf(run.events)} | ${cliVerdicts}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const stageMs = (events: readonly RunEvent[]) =>
  events
    .filter((e) => e.type === "stage.finished")
    .map((e) => `${String(e.payload["stage"])} ${(Number(e.payload["ms"]) / 1000).toFixed(1)}`)
    .join(" · ");

/** Each M5 candidate's seconds (its eval run and its yes-bias control), from the event before its result. */
const candidateSeconds = (events: readonly RunEvent[]) => {
  const out: string[] = [];
  let from: number | undefined;
  for (const e of events) {
    if (e.type === "stage.started" && e.payload["stage"] === "M5") from = Date.parse(e.ts);
    if (e.type !== "repair.tested" || from === undefined) continue;
    out.push(`${String(e.payload["signature"])} ${((Date.parse(e.ts) - from) / 1000).toFixed(2)}`);
    from = Date.parse(e.ts);
  }
  return out.join(" · ") || "none";
};

/** The demo investigation in a new tab of the visit's browser, and its lines. */
async function investigateInPage(visit: Visit, line: (label: string, value: string) => void): Promise<PageRun> {
  const { harness, label } = visit;
  const page = visit.page ?? (await harness.context.newPage());
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    // An open tab's document stays (the navigations below change its hash only): the observer is installed in it.
    if (visit.page) await page.evaluate(LONG_TASKS);
    else await page.addInitScript(LONG_TASKS);
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    // The model worker says when its helper worker (a second copy of the model) could not start or stopped.
    page.on("console", (m) => {
      if (m.type() === "warning" && m.text().includes("helper model worker")) errors.push(m.text());
    });

    await page.goto(`${harness.url}#/investigate`);
    await page.getByRole("heading", { name: "New investigation" }).waitFor();
    if (await page.getByText("No dataset is stored yet").isVisible()) {
      await page.goto(harness.url);
      await page.getByTestId("library-add-demo").click();
      await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
      await page.goto(`${harness.url}#/investigate`);
    }
    // The page's internal switch for the model's copies (src/ui/app/jobs.svelte.ts `modelCopies`), read at Start.
    const copies = process.env["EVALRX_BENCH_COPIES"];
    await page.evaluate(
      (n) => (n ? localStorage.setItem("evalrx:model-copies", n) : localStorage.removeItem("evalrx:model-copies")),
      copies ?? "",
    );
    await page.getByTestId("investigate-dataset").selectOption("pope");
    const sample = process.env["EVALRX_BENCH_SAMPLE"] ?? "";
    await page.getByTestId("investigate-sample").fill(sample);
    await page.getByTestId("investigate-seed").fill("1");
    await page.getByTestId("investigate-holdout").fill("0.4");
    await page.getByTestId("investigate-ceiling").selectOption("L3b");
    await page
      .getByTestId("investigate-plan")
      .filter({ hasText: `${sample || "600"} cases` })
      .waitFor();
    const from = await page.evaluate(() => performance.now());
    const browser = harness.context.browser()!;
    const recording = await startLongTaskRecording(browser, page);
    const workerProfiling = process.env["EVALRX_BENCH_WORKER_PROFILE"]
      ? await startWorkerProfiling(browser)
      : undefined;
    const profileEpoch = Date.now();
    // The page's own clock says when it showed the run settled (a mutation observer on its DOM), so the wall time
    // is the page's, not the moment the bench's once-a-second poll noticed it (half a second late on average).
    const clickedAt = await page.evaluate((settledStates) => {
      const w = window as unknown as { __settledAt?: number };
      new MutationObserver((_, observer) => {
        const text = document.querySelector('[data-testid="investigation-status"]')?.textContent?.trim() ?? "";
        if (!settledStates.includes(text)) return;
        w.__settledAt = performance.now();
        observer.disconnect();
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
      return performance.now();
    }, SETTLED_STATUSES as string[]);
    const pageStart = Date.now();
    await page.getByTestId("start-investigation").click();
    // Polled once a second (a locator's wait polls the DOM many times a second: the bench's own main-thread work).
    // It ends on any settled state: a failed run says so at once instead of holding the bench for 30 minutes.
    const shots = process.env["EVALRX_BENCH_SHOTS"];
    const running = shots
      ? page
          .getByTestId("panel-M2")
          .waitFor({ timeout: 1_800_000 })
          .then(() => page.screenshot({ path: join(shots, "investigate-running.png"), fullPage: true }))
          .catch((error: unknown) => console.error(`no screenshot of the running investigation: ${String(error)}`))
      : undefined;
    const settled = await step("the 600-case investigation in the page", async () => {
      const handle = await page
        .waitForFunction(
          (settledStates) => {
            const text = document.querySelector('[data-testid="investigation-status"]')?.textContent?.trim() ?? "";
            return settledStates.includes(text) ? text : false;
          },
          SETTLED_STATUSES as string[],
          { polling: 1000, timeout: 1_800_000 },
        )
        .catch(async (error: unknown) => {
          // Say where the page stood: its status line and stage rail, not only the timeout.
          const where = await page
            .locator(".actions, [role=tablist]")
            .allTextContents()
            .catch(() => []);
          throw new Error(
            `${error instanceof Error ? error.message.split("\n")[0] : String(error)}; the page showed: ${where.join(" | ").replace(/\s+/g, " ").trim() || "(nothing)"}`,
            { cause: error },
          );
        });
      return settledStatus((await handle.jsonValue()) as string);
    });
    const settledAt = await page.evaluate(() => (window as unknown as { __settledAt?: number }).__settledAt);
    const pageSeconds = ((settledAt ?? clickedAt + (Date.now() - pageStart)) - clickedAt) / 1000;
    const workerProfiles = await workerProfiling?.stop();
    const recorded = await stopLongTaskRecording(browser, recording);
    if (settled !== "finished") {
      const shown = (
        await page
          .locator(".actions")
          .textContent()
          .catch(() => null)
      )
        ?.replace(/\s+/g, " ")
        .trim();
      const log = await page
        .getByTestId("investigation-log")
        .locator("li")
        .last()
        .textContent()
        .catch(() => null);
      throw new Error(
        `the investigation in the page ended '${settled}' after ${pageSeconds.toFixed(0)} s: ${shown ?? "(no message)"}; its last log line: ${log ?? "(none)"}`,
      );
    }
    // The running screenshot is taken once M2's panel shows; a run that never showed it does not hold the bench.
    await Promise.race([running, new Promise((done) => setTimeout(done, 5000))]);
    if (shots) {
      await page.screenshot({ path: join(shots, "investigate-finished.png"), fullPage: true });
      await page.getByTestId("growth-modes").screenshot({ path: join(shots, "investigate-modes.png") });
    }
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

    // The page's lines first: on a loaded machine the CLI's run after it takes minutes more.
    const pageCpu = rendererCpuSeconds(recorded);
    const poolMs = poolTotal(recorded.pool);
    line(
      `600-case investigation in the page (WASM, ${label})`,
      `${pageSeconds.toFixed(1)} s wall, ${pageCpu.toFixed(1)} s CPU in its renderer (its threads' tasks ${(pageCpu - poolMs / 1000).toFixed(1)} s, the thread pool ${(poolMs / 1000).toFixed(1)} s)`,
    );
    line("  stages in the page, s", `${stageMs(pageEvents)} · ${outsideStages(pageEvents, pageStart, pageSeconds)}`);
    line("  M5 candidates in the page, s", candidateSeconds(pageEvents));
    line(
      "  the renderer's thread pool, s CPU",
      Object.entries(recorded.pool)
        .map(([kind, ms]) => `${kind} ${(ms / 1000).toFixed(1)}`)
        .join(" · "),
    );
    line("  longest main-thread task", `${tasks.max.toFixed(0)} ms (${tasks.count} over 50 ms; target ≤ 200 ms)`);
    traceLines(line, recorded, pageEvents, profileEpoch, workerProfiles);
    if (errors.length) line("  page errors", errors.join(" | "));
    return { label, seconds: pageSeconds, cpu: pageCpu, events: pageEvents };
  } finally {
    await page.close();
  }
}

/**
 * CPU seconds of this process's finished children (/proc/self/stat's cutime + cstime): a child's time is added
 * once it has exited and been waited for, so the difference around one `exec` is that command's CPU time.
 */
function childCpuSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of stat(5), counted from the state (field 3) on here.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * CPU seconds of the measured page's renderer in the trace: the tasks of every thread of the process that ran its
 * main thread, and its thread pool's (V8 compiling the WebAssembly and JavaScript, its GC helpers): the CLI's
 * process time counts its helper threads too.
 */
function rendererCpuSeconds(recorded: Awaited<ReturnType<typeof stopLongTaskRecording>>): number {
  const pid = recorded.mainThread.split(":")[0];
  let ms = poolTotal(recorded.pool);
  for (const [thread, t] of recorded.threads)
    if (thread.split(":")[0] === pid) ms += t.tasks.reduce((n, task) => n + task.cpuMs, 0);
  return ms / 1000;
}

/**
 * The page's time outside the stages: from the click to the run's first event (the model load, reading the
 * cases), and from its last event to the page showing it finished.
 */
function outsideStages(events: readonly RunEvent[], clickedAt: number, seconds: number): string {
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) return "no events";
  const before = (Date.parse(first.ts) - clickedAt) / 1000;
  const after = seconds - (Date.parse(last.ts) - clickedAt) / 1000;
  return `before M1 ${before.toFixed(1)} (the model load, reading the cases) · after M5 ${after.toFixed(1)}`;
}

/** The ticks (µs, Chromium's clock) of an event's ISO time, from the profile's start and the wall time then. */
const ticksOf = (profile: CpuProfile, epoch: number, iso: string) =>
  profile.startTime + (Date.parse(iso) - epoch) * 1000;

/**
 * The trace's lines: the longest main-thread tasks by wall and by CPU time with what they ran and when (seconds
 * into the run, and the stage then), the main thread's busiest functions, and each stage's model-worker time.
 */
function traceLines(
  line: (label: string, value: string) => void,
  recorded: Awaited<ReturnType<typeof stopLongTaskRecording>>,
  events: readonly RunEvent[],
  epoch: number,
  workerProfiles: { url: string; profile: CpuProfile }[] | undefined,
): void {
  const { tasks, profile, threads } = recorded;
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const stages = events
    .filter((e) => e.type === "stage.started" || e.type === "stage.finished")
    .map((e) => ({
      at: ticksOf(profile, epoch, e.ts),
      stage: String(e.payload["stage"]),
      start: e.type === "stage.started",
    }));
  const stageAt = (ts: number) => {
    let current = "before M1";
    for (const s of stages) if (s.at <= ts) current = s.start ? s.stage : `after ${s.stage}`;
    return current;
  };
  const t0 = profile.startTime;
  const during = tasks.filter((t) => t.ts >= t0 && t.ts <= profile.endTime);
  const byWall = [...during].sort((a, b) => b.wallMs - a.wallMs);
  const byCpu = [...during].sort((a, b) => b.cpuMs - a.cpuMs);
  const cpuTotal = during.reduce((n, t) => n + t.cpuMs, 0);
  line(
    "  main thread in Chromium's trace",
    `longest ${ms(byWall[0]?.wallMs ?? 0)} wall (${ms(byWall[0]?.cpuMs ?? 0)} of it on a CPU); longest on a CPU ${ms(byCpu[0]?.cpuMs ?? 0)}; ${during.filter((t) => t.wallMs > 50).length} over 50 ms wall, ${during.filter((t) => t.cpuMs > 50).length} over 50 ms CPU, ${(cpuTotal / 1000).toFixed(1)} s CPU in all`,
  );
  const describe = (t: TracedTask) => {
    const f = taskFunctions(profile, t, 4);
    return `${ms(t.wallMs)} wall / ${ms(t.cpuMs)} CPU at ${((t.ts - t0) / 1e6).toFixed(1)} s (${stageAt(t.ts)}): ${f.total.join("; ")}`;
  };
  for (const t of byCpu.slice(0, 3)) line("    a longest task on a CPU", describe(t));
  if (byWall[0] && !byCpu.slice(0, 3).includes(byWall[0]))
    line("    the longest task by wall time", describe(byWall[0]));
  const whole = profileFunctions(profile, 8);
  line("  main thread's functions, self time", whole.self.join("; "));
  line("  main thread's functions, total time", whole.total.join("; "));
  const workers = [...threads.values()].filter((t) => t.name === "DedicatedWorker thread");
  const windows = stages
    .filter((s) => s.start)
    .map((s) => ({
      stage: s.stage,
      from: s.at,
      to: stages.find((e) => !e.start && e.stage === s.stage && e.at >= s.at)?.at ?? profile.endTime,
    }));
  for (const w of windows) {
    const byCpu = workers.map((t) => ({ ...busyIn(t.tasks, w.from, w.to) })).sort((a, b) => b.cpuMs - a.cpuMs);
    const busy = byCpu[0];
    // The model worker and its helper (workers/model-pool.ts) share a stage's cases: the second's time says so.
    const second = byCpu[1];
    const main = busyIn(during, w.from, w.to);
    const fns = workerProfiles
      ?.map((p) => ({ p, f: taskFunctions(p.profile, { ts: w.from, wallMs: (w.to - w.from) / 1000, cpuMs: 0 }, 6) }))
      .sort((a, b) => b.f.sampledMs - a.f.sampledMs)[0];
    line(
      `  ${w.stage}: ${((w.to - w.from) / 1e6).toFixed(1)} s`,
      `busiest worker ${((busy?.wallMs ?? 0) / 1000).toFixed(1)} s in tasks, ${((busy?.cpuMs ?? 0) / 1000).toFixed(1)} s CPU; next ${((second?.cpuMs ?? 0) / 1000).toFixed(1)} s CPU; main thread ${(main.cpuMs / 1000).toFixed(1)} s CPU${fns ? ` | ${fns.p.url.split("/").pop()}: self ${taskFunctions(fns.p.profile, { ts: w.from, wallMs: (w.to - w.from) / 1000, cpuMs: 0 }, 6).self.join("; ")}` : ""}`,
    );
  }
}
