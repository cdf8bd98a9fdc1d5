/**
 * `npm run bench:l4 -- --page [--sample 200]`: L4 in the page against L4 in Node, one after the other in one run.
 * The same investigation (the demo POPE set, a stable sample, seed 1, holdout 0.4, ceiling L4, the bundled
 * tiny VLM) runs in the built app — the loop and the head adapter's training in the model worker on ONNX Runtime
 * Web (WASM) — and then through `evalrx investigate`; both train the same adapter on the same pool for the same
 * steps. Prints each side's L4 time (the pool's features, the Adam steps, the merge and the merged model's load:
 * the training record's `ms`), their ratio (target ≤ 3×), the final losses side by side, and the longest
 * main-thread task while the page trained (target ≤ 200 ms) and over the whole run, with the load average.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parseEventLines, type RunEvent } from "../events.ts";
import { startBrowserHarness } from "../../node/browser-harness.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const exec = promisify(execFile);
const line = (label: string, value: string) => console.log(`${label.padEnd(46)} ${value}`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

// Long tasks, and when the page's L4 panel (training in the worker) appears and goes: the window L4 trains in.
// `__name`: tsx names the arrow functions passed to page.evaluate; the page needs the helper.
const OBSERVERS = `
  globalThis.__name = (f) => f;
  window.__l4 = { tasks: [], shown: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__l4.tasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
  let on = false;
  new MutationObserver(() => {
    const now = !!document.querySelector('[data-testid="l4-training"]');
    if (now !== on) { on = now; window.__l4.shown.push(performance.now()); }
  }).observe(document, { childList: true, subtree: true });
`;

interface Training {
  readonly ms: number;
  readonly initialLoss: number;
  readonly finalLoss: number;
  readonly pool: { readonly cases: number; readonly rows: number };
  readonly options: { readonly steps: number };
}

function l4Of(events: readonly RunEvent[], where: string): Training {
  const tested = events.find((e) => e.type === "repair.tested" && e.payload["tier"] === "L4");
  if (!tested)
    throw new Error(
      `${where}: M5 never reached L4 (fixed by ${String(events.find((e) => e.type === "repairs.finished")?.payload["fixedBy"])})`,
    );
  const training = tested.payload["training"] as Training | { failed: string } | undefined;
  if (!training || "failed" in training) throw new Error(`${where}: L4 did not train: ${JSON.stringify(training)}`);
  return training;
}

/** Runs the page side, then the CLI side, and prints the lines. */
export async function benchL4Page(sample: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-l4-page-"));
  const harness = await startBrowserHarness();
  try {
    const page = await harness.context.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.addInitScript(OBSERVERS);
    await page.goto(`${harness.url}#/investigate`);
    await page.getByRole("heading", { name: "New investigation" }).waitFor();
    if (await page.getByText("No dataset is stored yet").isVisible()) {
      await page.goto(harness.url);
      await page.getByTestId("library-add-demo").click();
      await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
      await page.goto(`${harness.url}#/investigate`);
    }
    await page.getByTestId("investigate-dataset").selectOption("pope");
    await page.getByTestId("investigate-sample").fill(String(sample));
    await page.getByTestId("investigate-seed").fill("1");
    await page.getByTestId("investigate-holdout").fill("0.4");
    await page.getByTestId("investigate-ceiling").selectOption("L4");
    await page
      .getByTestId("investigate-plan")
      .filter({ hasText: `${sample} cases` })
      .waitFor();
    const pageStart = Date.now();
    await page.getByTestId("start-investigation").click();
    await page.getByTestId("l4-training").waitFor({ timeout: 1_800_000 });
    await page.getByTestId("l4-step").waitFor({ timeout: 600_000 });
    mkdirSync(join(ROOT, "tmp/h19"), { recursive: true });
    await page.getByTestId("l4-training").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ROOT, "tmp/h19/l4-training.png") });
    const handle = await page.waitForFunction(
      () => {
        const text = document.querySelector('[data-testid="investigation-status"]')?.textContent?.trim() ?? "";
        return ["finished", "failed", "cancelled", "interrupted"].includes(text) ? text : false;
      },
      undefined,
      { polling: 1000, timeout: 1_800_000 },
    );
    const settled = (await handle.jsonValue()) as string;
    const pageSeconds = (Date.now() - pageStart) / 1000;
    if (settled !== "finished") throw new Error(`the investigation in the page ended '${settled}'`);
    const tasks = await page.evaluate(() => {
      const { tasks, shown } = (
        window as unknown as { __l4: { tasks: { start: number; duration: number }[]; shown: number[] } }
      ).__l4;
      const [from = 0, to = Infinity] = shown;
      const during = tasks.filter((t) => t.start + t.duration >= from && t.start <= to);
      return {
        l4: Math.max(0, ...during.map((t) => t.duration)),
        l4Count: during.length,
        all: Math.max(0, ...tasks.map((t) => t.duration)),
        windowMs: to - from,
      };
    });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download events.jsonl" }).click(),
    ]);
    const inPage = l4Of(parseEventLines(readFileSync((await download.path())!, "utf8")), "the page");
    const pageLoad = load();

    const out = join(dir, "cli");
    const cliStart = Date.now();
    await exec(
      process.execPath,
      [
        join(ROOT, "src/node/bin.mjs"),
        "investigate",
        ...["--seed", "1", "--holdout", "0.4", "--max-tier", "L4", "--sample", String(sample), "--out", out],
      ],
      { cwd: ROOT, encoding: "utf8", timeout: 1_800_000 },
    );
    const cliSeconds = (Date.now() - cliStart) / 1000;
    const inNode = l4Of(parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8")), "the CLI");

    line(
      `L4 on tiny-vlm, ${sample} demo cases: pool`,
      `${inPage.pool.cases} cases / ${inPage.pool.rows} rows (page), ${inNode.pool.cases} / ${inNode.pool.rows} (Node); ${inPage.options.steps} steps each`,
    );
    line(
      "L4 train+merge, page (WASM) vs Node",
      `${(inPage.ms / 1000).toFixed(2)} s vs ${(inNode.ms / 1000).toFixed(2)} s → ${(inPage.ms / inNode.ms).toFixed(2)}× (target ≤ 3×)`,
    );
    line(
      "  loss, page vs Node",
      `${inPage.initialLoss.toFixed(4)} → ${inPage.finalLoss.toFixed(4)} vs ${inNode.initialLoss.toFixed(4)} → ${inNode.finalLoss.toFixed(4)}`,
    );
    line(
      "L4 in the page: longest main-thread task",
      `${tasks.l4.toFixed(0)} ms while the L4 panel showed (${(tasks.windowMs / 1000).toFixed(1)} s, ${tasks.l4Count} tasks over 50 ms; target ≤ 200 ms); ${tasks.all.toFixed(0)} ms over the whole run`,
    );
    line(
      "  whole investigation, page vs CLI",
      `${pageSeconds.toFixed(1)} s vs ${cliSeconds.toFixed(1)} s (load average ${pageLoad} after the page, ${load()} after the CLI)`,
    );
  } finally {
    await harness.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
