/**
 * The 600-case eval in the page (`bench:app`, or alone: `npx tsx src/ui/bench/eval.bench.ts`): the demo
 * POPE dataset through the bundled tiny VLM with the yesNo evaluator, started from the Runs page's form
 * as a user would, watched until the run is finished, and the same cases through the CLI in the same run:
 * `evalrx eval` in a fresh process (as a user runs it: every CLI eval is a process's first) once before the
 * page's evals and once after (the machine is shared: the load moves while the page runs, and the mean of the two
 * brackets it), and `runEval` twice in this process with the model kept loaded (the second run is what a warm
 * process gives: the JIT has seen the whole path once). Each side's throughput is its trials over its run's own
 * startedAt → finishedAt (the same field the store keeps for both). The page's first eval is compared with the
 * CLI's; its later evals also with the warm Node run. The page is ready as a returning user's would
 * be: its engine check has finished (a first visit measures WASM against WebGPU once, seconds of both cores
 * on a software adapter, and remembers the result), its offline copy is saved, and tiny-vlm is loaded, so the
 * trace covers the eval.
 * The page runs the eval six times, switched between one copy of the model (the model worker's) and two (a helper
 * model worker beside it, `workers/model-copies.ts`) by an internal switch (`modelCopies` in
 * src/ui/app/jobs.svelte.ts). The first eval is a user's first with the default (one copy): the first eval in a
 * page ran at 0.4–0.7× the speed of the next ones. The second is on two copies and starts the helper (kept while
 * the model stays loaded). Then, in turns (A B A B, so the load's drift falls on both), one copy and two with the
 * helper running. So one run prints what the second copy wins, at the same load. Given a returning user's browser
 * (bench:app passes one: a profile on disk whose earlier visit left Chromium's compiled code for ONNX Runtime), a
 * seventh eval runs there, the first in a new page, to show what that first eval costs when the code is not
 * compiled again.
 * Prints the page's longest main-thread task (target ≤ 200 ms; by wall clock from the page's
 * PerformanceObserver, and by the main thread's own CPU time from a Chromium trace, which a loaded machine
 * does not inflate), trials/s of each page eval against the CLI's (target ≥ 0.5×), the page's workers' CPU time
 * per trial (trace) against the Node process's (`process.cpuUsage`), how busy the busiest worker was (its CPU
 * time over the run's wall time), and whether every page eval gave the CLI's answers, trial by trial.
 * Alone through bench:app: `npm run bench:app -- --only eval`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { caseHash, datasetVersion, importDataset, select } from "../../datasets/index.ts";
import { runEval, yesNo } from "../../evals/index.ts";
import { startBrowserHarness, type BrowserHarness } from "../../node/browser-harness.ts";
import { FileStore } from "../../store/files.node.ts";
import type { RunExport } from "../../store/types.ts";
import type { Page } from "playwright-core";
import { traced } from "../pages/datasets/bench/bench-datasets.node.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const ms = (x: number) => `${x.toFixed(0)} ms`;
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const LONG_TASKS = `
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
`;

/** Runs the 600-case eval in the page `harness` serves and in Node; prints its lines through `line`. */
export async function benchEval(
  harness: BrowserHarness,
  line: (label: string, value: string) => void,
  returning?: BrowserHarness,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-eval-"));
  const page = await harness.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.addInitScript(LONG_TASKS);
    await page.goto(harness.url);
    await page.getByTestId("library-add-demo").click();
    await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
    await page.goto(`${harness.url}#/settings`);
    await page.getByTestId("engine-check-device").waitFor({ timeout: 600_000 });
    // A first visit also saves the app's offline copy (the service worker's install): 8 s after the engine check on
    // a loaded 2-core machine, so it overlapped the eval when the eval part ran alone (`--only eval`).
    await page.evaluate(
      `navigator.serviceWorker ? Promise.race([navigator.serviceWorker.ready, new Promise((r) => setTimeout(r, 300000))]) : undefined`,
    );
    await page.goto(`${harness.url}#/models`);
    const vlm = page.locator('[data-testid="model-card"][data-model="bundled:tiny-vlm"]');
    await vlm.getByTestId("load").click();
    await vlm.getByTestId("model-loaded-badge").waitFor({ timeout: 300_000 });

    const imported = await importDataset(readFileSync(join(ROOT, "public/demo/pope.jsonl")), { name: "pope.jsonl" });
    const cases = select(imported.cases, {});
    const { loadModel } = await import("../../models/load.node.ts");
    const model = await loadModel("tiny-vlm");
    // Trials are matched by case and repeat: the page lists a stored dataset's cases in its own order.
    const byTrial = (items: readonly { caseId: string; repeat: number; output: string }[]) =>
      new Map(items.map((i) => [`${i.caseId}#${i.repeat}`, i.output]));
    /** A run's trials per second over its own startedAt → finishedAt, as the store keeps them on both sides. */
    const runRate = (run: { startedAt: string; finishedAt?: string }, trials: number) =>
      trials / ((Date.parse(run.finishedAt!) - Date.parse(run.startedAt)) / 1000);
    /** `evalrx eval` on the same cases in a fresh process: the CLI as a user runs it. */
    const cli = async (name: string): Promise<{ rate: number; outputs: Map<string, string> }> => {
      const config = join(dir, `${name}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          name,
          dataset: join(ROOT, "public/demo/pope.jsonl"),
          model: "tiny-vlm",
          evaluators: ["yesNo"],
          generation: { maxNewTokens: 3 },
        }),
      );
      const storeDir = join(dir, name);
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [join(ROOT, "src/node/bin.mjs"), "eval", config, "--store", storeDir, "--json"],
        { cwd: ROOT, maxBuffer: 64 * 2 ** 20 },
      );
      const runId = (JSON.parse(stdout) as { run: string }).run;
      const store = await FileStore.open(storeDir);
      try {
        const run = (await store.getRun(runId))!;
        const items = await store.items(runId);
        return { rate: runRate(run, items.length), outputs: byTrial(items) };
      } finally {
        await store.close();
      }
    };
    /** `runEval` in this process, the model kept loaded between runs: the second run is a warm process's. */
    const inProcess = async (
      name: string,
    ): Promise<{ rate: number; cpuMsPerTrial: number; outputs: Map<string, string> }> => {
      const store = await FileStore.open(join(dir, name));
      const cpu = process.cpuUsage();
      const { run } = await runEval({
        store,
        dataset: { id: "pope", cases },
        model,
        evaluators: [yesNo()],
        generation: { maxNewTokens: 3 },
        images: async (ref) => new Uint8Array(readFileSync(join(ROOT, "public/demo", ref))),
      });
      const used = process.cpuUsage(cpu);
      const items = await store.items(run.id);
      const stored = (await store.getRun(run.id))!;
      await store.close();
      return {
        rate: runRate(stored, items.length),
        cpuMsPerTrial: (used.user + used.system) / 1000 / cases.length,
        outputs: byTrial(items),
      };
    };

    /** One 600-case eval started from the Runs page's form, on one copy of the model or two. */
    const pageEval = async (
      name: string,
      copies: 1 | 2,
      on: { page: Page; url: string } = { page, url: harness.url },
    ) => {
      // The internal switch the page reads at each eval's start (`modelCopies` in src/ui/app/jobs.svelte.ts).
      await on.page.evaluate((n) => localStorage.setItem("evalrx:model-copies", String(n)), copies);
      await on.page.goto(`${on.url}#/runs`);
      // With a run stored (the 100k-case run before this part), the form starts folded behind "New eval…".
      const fold = on.page.getByRole("button", { name: "New eval…" });
      await on.page.getByTestId("eval-dataset").or(fold).first().waitFor();
      if (await fold.isVisible()) await fold.click();
      await on.page.getByTestId("eval-dataset").selectOption("pope");
      await on.page.getByLabel("Max new tokens").fill("3");
      await on.page.getByTestId("eval-name").fill(name);
      await on.page.getByTestId("eval-plan").filter({ hasText: "600 cases" }).waitFor();
      const from = await on.page.evaluate(() => performance.now());
      const loadBefore = loadAverage();
      const { tasks } = await traced(on.page, async () => {
        await on.page.getByTestId("start-eval").click();
        // Polled once a second: a locator's wait polls the page's DOM many times a second, main-thread work of the
        // bench's own that the page's user does not cause (211 ms of the page's main thread in a profiled run).
        // A function, not a string: the app's CSP forbids the eval a string predicate needs.
        await on.page.waitForFunction(
          () => document.querySelector('[data-testid="run-status"]')?.textContent?.trim() === "finished",
          undefined,
          { polling: 1000, timeout: 900_000 },
        );
      });
      const observed = await on.page.evaluate(
        (t0) =>
          (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks
            .filter((t) => t.start >= t0)
            .map((t) => t.duration),
        from,
      );
      const [download] = await Promise.all([
        on.page.waitForEvent("download"),
        on.page.getByRole("button", { name: "Export run file" }).click(),
      ]);
      const exported = JSON.parse(readFileSync((await download.path())!, "utf8")) as RunExport;
      const seconds = (Date.parse(exported.run.finishedAt!) - Date.parse(exported.run.startedAt)) / 1000;
      return {
        tasks,
        longestWall: Math.max(0, ...observed),
        overWall: observed.length,
        trials: exported.items.length,
        seconds,
        rate: runRate(exported.run, exported.items.length),
        outputs: byTrial(exported.items),
        load: `${loadBefore} → ${loadAverage()}`,
      };
    };

    const warming = await inProcess("node-first");
    const warm = await inProcess("node-warm");
    const before = await cli("cli-before");
    const first = await pageEval("bench-eval-600-first", 1);
    // Starts the helper (kept until the model unloads), so the two-copy evals after it find it running.
    const starting = await pageEval("bench-eval-600-helper-start", 2);
    const ones = [await pageEval("bench-eval-600-one-a", 1)];
    const twos = [await pageEval("bench-eval-600-two-a", 2)];
    ones.push(await pageEval("bench-eval-600-one-b", 1));
    twos.push(await pageEval("bench-eval-600-two-b", 2));
    await page.evaluate(() => localStorage.removeItem("evalrx:model-copies"));
    // A returning user's first eval in a new page: Chromium's compiled code for ONNX Runtime kept from an earlier visit.
    let returned: Awaited<ReturnType<typeof pageEval>> | undefined;
    if (returning) {
      const again = await returning.context.newPage();
      try {
        await again.setViewportSize({ width: 1280, height: 900 });
        await again.addInitScript(LONG_TASKS);
        await again.goto(`${returning.url}#/models`);
        const card = again.locator('[data-testid="model-card"][data-model="bundled:tiny-vlm"]');
        await card.getByTestId("load").click();
        await card.getByTestId("model-loaded-badge").waitFor({ timeout: 300_000 });
        returned = await pageEval("bench-eval-600-first-returning", 1, { page: again, url: returning.url });
        await again.evaluate(() => localStorage.removeItem("evalrx:model-copies"));
      } finally {
        await again.close();
      }
    }
    const one = ones[0]!;
    const after = await cli("cli-after");
    await model.dispose();
    const cliRate = (before.rate + after.rate) / 2;
    const pages = [
      ["first eval in the page, one copy", first],
      ["two copies, starting the helper", starting],
      ["one copy, A", ones[0]!],
      ["two copies, A", twos[0]!],
      ["one copy, B", ones[1]!],
      ["two copies, B", twos[1]!],
      ...(returned ? ([["first eval in a returning visit's new page, one copy", returned]] as const) : []),
    ] as const;
    const longestCpu = Math.max(...pages.map(([, p]) => p.tasks.longestCpu));
    const longestWall = Math.max(...pages.map(([, p]) => p.longestWall));
    line(
      "600-case eval in the page: longest main-thread task",
      `${ms(longestWall)} wall (${pages.map(([, p]) => p.overWall).join("/")} over 50 ms; PerformanceObserver), ` +
        `${ms(longestCpu)} of CPU (${pages.map(([, p]) => p.tasks.over50Cpu).join("/")} over 50 ms; trace), the worst of ` +
        `the ${pages.length} page evals below — target ≤ 200 ms: ${longestCpu <= 200 ? "met" : "MISSED"} by CPU, ` +
        `${longestWall <= 200 ? "met" : "MISSED"} by wall clock`,
    );
    line(
      "600-case eval throughput, the CLI (evalrx eval)",
      `${cliRate.toFixed(1)} trials/s, a fresh process each time (before the page's evals ${before.rate.toFixed(1)}, after ${after.rate.toFixed(1)})`,
    );
    line(
      "  Node in one process (runEval)",
      `first run ${warming.rate.toFixed(1)}, second (warm) ${warm.rate.toFixed(1)} trials/s; ` +
        `${warming.cpuMsPerTrial.toFixed(2)} / ${warm.cpuMsPerTrial.toFixed(2)} ms of CPU per trial (process.cpuUsage)`,
    );
    for (const [label, p] of pages) {
      const ratio = p.rate / cliRate;
      line(
        `  page, ${label}`,
        `${p.rate.toFixed(1)} trials/s → ${ratio.toFixed(2)}× the CLI (target ≥ 0.5×: ${ratio >= 0.5 ? "met" : "MISSED"}), ` +
          `${(p.rate / warm.rate).toFixed(2)}× warm Node; ` +
          `${p.trials} trials in ${p.seconds.toFixed(1)} s; workers' CPU ${((p.tasks.workerCpuSeconds * 1000) / p.trials).toFixed(2)} ms ` +
          `per trial (busiest worker ${((p.tasks.busiestWorkerCpuSeconds / p.seconds) * 100).toFixed(0)}% busy); load ${p.load}`,
      );
    }
    const mean = (runs: readonly { rate: number }[]) => runs.reduce((sum, r) => sum + r.rate, 0) / runs.length;
    line(
      "  two copies against one, same run",
      `${mean(twos).toFixed(1)} vs ${mean(ones).toFixed(1)} trials/s (means of A and B) → ${(mean(twos) / mean(ones)).toFixed(2)}×; ` +
        `two copies → ${(mean(twos) / warm.rate).toFixed(2)}× warm Node, one copy → ${(mean(ones) / warm.rate).toFixed(2)}× warm Node`,
    );
    const differing = (outputs: ReadonlyMap<string, string>, from: ReadonlyMap<string, string>) =>
      outputs.size === from.size
        ? [...outputs].filter(([trial, o]) => from.get(trial) !== o).length
        : `${outputs.size} trials against ${from.size}`;
    // Each trial's seed comes from its case and repeat: the copies and the calls in flight must not change an answer.
    line(
      "  answers differing from the one-copy eval's",
      `${pages
        .filter(([, p]) => p !== one)
        .map(([label, p]) => `${label}: ${differing(p.outputs, one.outputs)}`)
        .join("; ")} (of ${one.outputs.size} trials)`,
    );
    line(
      "  answers differing from the CLI's",
      `one copy: ${differing(one.outputs, before.outputs)}; the CLI's second run: ${differing(after.outputs, before.outputs)}; ` +
        `Node in one process: ${differing(warming.outputs, before.outputs)} / ${differing(warm.outputs, before.outputs)}`,
    );
    const firstDiff = [...one.outputs].find(([trial, o]) => before.outputs.get(trial) !== o);
    if (firstDiff)
      line(
        "  first differing trial",
        `${firstDiff[0]}: page ${JSON.stringify(firstDiff[1])} vs the CLI ${JSON.stringify(before.outputs.get(firstDiff[0]))}`,
      );
    line("  dataset version (same cases on both sides)", `${datasetVersion(cases)} · ${caseHash(cases[0]!)}`);
    if (errors.length) line("  page errors", errors.join(" | "));
  } finally {
    await page.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const harness = await startBrowserHarness();
  try {
    console.log(`eval bench — load average ${readFileSync("/proc/loadavg", "utf8").trim()}`);
    await benchEval(harness, (label, value) => console.log(`${label.padEnd(44)} ${value}`));
  } finally {
    await harness.close();
  }
}
