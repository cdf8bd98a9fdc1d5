/**
 * Forward speed, page against Node, measured side by side: one forward of
 * the bundled tiny-vlm (a demo image and prompt, "yes" teacher-forced, no
 * capture) on onnxruntime-node in this process, through the page's model
 * worker in Chromium (WASM, the product path), and inside a worker (the same
 * runtime without the boundary). Rounds alternate between the three, so a
 * busy machine slows all of them alike. Target: page ≤ 3× Node.
 *
 * `npm run bench:forward`, or `benchForwardSpeed()` from another bench.
 */
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { createServer } from "vite";
import { chromiumArgs, chromiumPath } from "../../node/chromium.mjs";
import { loadModel, REPO_ROOT } from "../load.node.ts";
import type { ForwardBenchSetup, startForwardBench, timeForwards } from "./forward-speed.browser.ts";
import { median } from "./forward-timing.ts";

type BrowserBench = { startForwardBench: typeof startForwardBench; timeForwards: typeof timeForwards };

/** What one run of the benchmark measured (medians, milliseconds). */
export interface ForwardSpeed {
  readonly nodeMs: number;
  readonly pageMs: number;
  readonly inWorkerMs: number;
  /** pageMs / nodeMs: the target is ≤ 3. */
  readonly ratio: number;
  readonly setup: ForwardBenchSetup;
  /** The lines the benchmark prints. */
  readonly lines: readonly string[];
}

const MODULE = "/src/models/bench/forward-speed.browser.ts";

/**
 * Runs the benchmark: `rounds` rounds of `perRound` forwards on each side.
 *
 * @example
 * const { ratio, lines } = await benchForwardSpeed({ rounds: 10 }); // ratio → e.g. 2.4
 */
export async function benchForwardSpeed(options: { rounds?: number; perRound?: number } = {}): Promise<ForwardSpeed> {
  const rounds = options.rounds ?? 12;
  const perRound = options.perRound ?? 10;
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("bench:forward needs Chromium: install it or set CHROMIUM_PATH");
  const first = readFileSync(`${REPO_ROOT}public/demo/pope.jsonl`, "utf8").split("\n")[0] ?? "{}";
  const demo = JSON.parse(first) as { input: { prompt: string; image: string } };
  const image = new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${demo.input.image}`));
  const input = { prompt: demo.input.prompt, image };

  const model = await loadModel("tiny-vlm");
  // No HMR or file watching: a file rewritten mid-run must not reload the page.
  const server = await createServer({ logLevel: "warn", server: { port: 0, hmr: false, watch: null } });
  await server.listen();
  const browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
  try {
    const page = await browser.newPage();
    await page.goto(server.resolvedUrls!.local[0]!, { timeout: 180_000 });
    // The dev server may reload the page once while it optimises dependencies: retry after a reload.
    const evaluate = async <A, R>(fn: (arg: A) => Promise<R>, arg: A): Promise<R> => {
      for (let attempt = 0; ; attempt++) {
        try {
          await page.waitForLoadState("networkidle");
          return (await page.evaluate(fn as (arg: unknown) => Promise<unknown>, arg as unknown)) as R;
        } catch (error) {
          if (attempt >= 2 || !String(error).includes("context was destroyed")) throw error;
        }
      }
    };
    const sent = { module: MODULE, prompt: input.prompt, image: Array.from(image) };
    const setup = await evaluate(async (arg) => {
      const bench = (await import(/* @vite-ignore */ arg.module)) as BrowserBench;
      return bench.startForwardBench({ prompt: arg.prompt, image: Uint8Array.from(arg.image) });
    }, sent);
    const node: number[] = [];
    const inPage: number[] = [];
    const inWorker: number[] = [];
    for (let i = 0; i < 3; i++) await model.forward(input, { answer: "yes" }); // warm-up
    const timeOn = (where: "page" | "in-worker", n: number) =>
      evaluate(
        async (arg) => {
          const bench = (await import(/* @vite-ignore */ arg.module)) as BrowserBench;
          return bench.timeForwards(arg.where, { prompt: arg.prompt, image: Uint8Array.from(arg.image) }, arg.n);
        },
        { ...sent, where, n },
      );
    await timeOn("page", 3);
    await timeOn("in-worker", 3);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < perRound; i++) {
        const start = performance.now();
        await model.forward(input, { answer: "yes" });
        node.push(performance.now() - start);
      }
      inPage.push(...(await timeOn("page", perRound)));
      inWorker.push(...(await timeOn("in-worker", perRound)));
    }
    const nodeMs = median(node);
    const pageMs = median(inPage);
    const inWorkerMs = median(inWorker);
    const ratio = pageMs / nodeMs;
    const f = (x: number) => x.toFixed(2);
    const lines = [
      `forward of tiny-vlm, page (model worker, WASM, ${setup.threads} thread${setup.threads === 1 ? "" : "s"}${setup.crossOriginIsolated ? "" : ", not cross-origin isolated"}, ONNX Runtime Web ${setup.ort}) vs onnxruntime-node: ${f(pageMs)} ms vs ${f(nodeMs)} ms → ${f(ratio)}× (target ≤ 3×; medians of ${rounds} × ${perRound}, interleaved)`,
      `  of which inside the worker: ${f(inWorkerMs)} ms (${f(inWorkerMs / nodeMs)}× Node); the worker boundary and comlink: ${f(pageMs - inWorkerMs)} ms`,
    ];
    return { nodeMs, pageMs, inWorkerMs, ratio, setup, lines };
  } finally {
    await browser.close();
    await server.close();
    await model.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchForwardSpeed();
  for (const line of result.lines) console.log(line);
}
