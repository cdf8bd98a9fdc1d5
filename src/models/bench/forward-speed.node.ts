/**
 * Forward speed, page against Node, measured side by side: one forward of
 * the bundled tiny-vlm (a demo image and prompt, "yes" teacher-forced, no
 * capture) on onnxruntime-node in this process, through the page's model
 * worker in Chromium (WASM, the product path), and inside a worker (the same
 * runtime without the boundary). Each side first warms up until its forwards
 * stop getting faster (V8's optimising tier for ONNX Runtime's WebAssembly
 * arrives seconds after a page loads: the line says what the first forwards
 * cost). Rounds then alternate between the three, so a busy machine slows all
 * of them alike. Target: page ≤ 3× Node.
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
import { warmUntilSteady, type WarmUp } from "./warm-up.ts";

const warmLine = (w: WarmUp) =>
  `${w.batches} batch${w.batches === 1 ? "" : "es"}, ${w.firstMs.toFixed(2)} → ${w.steadyMs.toFixed(2)} ms`;

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
    const timeOn = (where: "page" | "in-worker", n: number) =>
      evaluate(
        async (arg) => {
          const bench = (await import(/* @vite-ignore */ arg.module)) as BrowserBench;
          return bench.timeForwards(arg.where, { prompt: arg.prompt, image: Uint8Array.from(arg.image) }, arg.n);
        },
        { ...sent, where, n },
      );
    const timeNode = async (n: number) => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const start = performance.now();
        await model.forward(input, { answer: "yes" });
        times.push(performance.now() - start);
      }
      return times;
    };
    // Each side runs until its forwards stop getting faster: the page's until V8 has compiled ONNX Runtime's hot
    // WebAssembly functions with its optimising tier (seconds of background CPU, once per page load).
    // Five batches in a row within 5%: three were met once on a plateau halfway through the compilation.
    const steady = { window: 5 };
    const warm = {
      node: await warmUntilSteady(() => timeNode(perRound), steady),
      page: await warmUntilSteady(() => timeOn("page", perRound), steady),
      inWorker: await warmUntilSteady(() => timeOn("in-worker", perRound), steady),
    };
    for (let r = 0; r < rounds; r++) {
      node.push(...(await timeNode(perRound)));
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
      `  warm-up before timing (batches of ${perRound}, until five in a row agree within 5%): page ${warmLine(warm.page)}; in the worker ${warmLine(warm.inWorker)}; Node ${warmLine(warm.node)}`,
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
