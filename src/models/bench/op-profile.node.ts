/**
 * Where a forward's kernel time goes, page against Node, per operator type: the bundled tiny-vlm's forward (a demo
 * image and prompt, "yes" teacher-forced, no capture) `forwards` times on onnxruntime-node in this process and on
 * ONNX Runtime Web (WASM) in Chromium, every session profiled by ONNX Runtime itself; for each operator type the
 * typical kernel time per forward on each side and their ratio. This says which kernels make the page's forward
 * slower than Node's (`npm run bench:forward` says by how much): profiling slows both sides, so the times here
 * are larger than the forward bench's, and the ratios are what to read.
 * Then single-operator graphs (`op-kernels.ts`: Erf, the fused GELU, Exp, Tanh, Sigmoid, Relu over the same seeded
 * floats), each profiled alone on both runtimes: a kernel's cost per element with no model around it, which says
 * whether a slow operator in the forward is slow in ONNX Runtime Web's WebAssembly build itself.
 *
 * `npm run bench:ops`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { chromium } from "playwright-core";
import { createServer } from "vite";
import { chromiumArgs, chromiumPath } from "../../node/chromium.mjs";
import { REPO_ROOT } from "../load.node.ts";
import { loadOrtModel } from "../ort-model.ts";
import { nodeFiles } from "../ort-session.node.ts";
import { wrapOrtSession, type SessionFactory } from "../session.ts";
import type { profileForwards, profileOperators } from "./op-profile.browser.ts";
import { OPERATOR_MARK, oneOperatorModel, operatorInput, SINGLE_OPERATORS } from "./op-kernels.ts";
import { opComparisonLines, opKernelTimes, profileEventsInText, type OrtProfileEvent } from "./op-profile.ts";

const FORWARDS = 400;
/** Each single-operator graph: its size (floats) and runs, and the input's seed. */
const OPERATOR_FLOATS = 16_384;
const OPERATOR_RUNS = 400;
const OPERATOR_SEED = 1;
const MODULE = "/src/models/bench/op-profile.browser.ts";

const first = readFileSync(`${REPO_ROOT}public/demo/pope.jsonl`, "utf8").split("\n")[0] ?? "{}";
const demo = JSON.parse(first) as { input: { prompt: string; image: string } };
const image = new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${demo.input.image}`));

/** A Node session on one thread whose profile goes into `dir`, in files whose names start with `prefix`. */
const profiledSession = (bytes: Uint8Array, dir: string, prefix: string) =>
  ort.InferenceSession.create(bytes, {
    executionProviders: ["cpu"],
    intraOpNumThreads: 1,
    enableProfiling: true,
    profileFilePrefix: join(dir, prefix),
  });

/** The events of the profiles in `dir` whose names start with `prefix` (ONNX Runtime names the files). */
const profileEventsIn = (dir: string, prefix: string) =>
  readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(".json"))
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as OrtProfileEvent[]);

/** Node: each session writes its profile into `dir`. */
async function profileOnNode(dir: string): Promise<OrtProfileEvent[]> {
  const sessions: ort.InferenceSession[] = [];
  const profiled: SessionFactory = async (bytes) => {
    const session = await profiledSession(bytes, dir, "node");
    sessions.push(session);
    return wrapOrtSession(session, (t) => new ort.Tensor(t.type, t.data as never, t.dims));
  };
  const model = await loadOrtModel(nodeFiles(`${REPO_ROOT}models/tiny-vlm`), profiled, { key: "tiny-vlm" });
  try {
    for (let i = 0; i < FORWARDS; i++) await model.forward({ prompt: demo.input.prompt, image }, { answer: "yes" });
    for (const session of sessions) session.endProfiling();
  } finally {
    await model.dispose();
  }
  return profileEventsIn(dir, "node");
}

/** Node: each single-operator graph profiled alone; its kernel time per run, µs, by operator. */
async function profileOperatorsOnNode(dir: string): Promise<Map<string, number>> {
  const x = new ort.Tensor("float32", operatorInput(OPERATOR_FLOATS, OPERATOR_SEED), [OPERATOR_FLOATS]);
  const times = new Map<string, number>();
  for (const entry of SINGLE_OPERATORS) {
    const domain = "domain" in entry ? entry.domain : undefined;
    const prefix = `operator-${entry.op}`;
    const session = await profiledSession(oneOperatorModel(entry.op, OPERATOR_FLOATS, domain), dir, prefix);
    for (let i = 0; i < OPERATOR_RUNS; i++) await session.run({ x });
    session.endProfiling();
    await session.release();
    times.set(entry.op, opKernelTimes(profileEventsIn(dir, prefix)).get(entry.op) ?? NaN);
  }
  return times;
}

/**
 * The page: the WASM build prints the events to the console, the forwards' first, then each single-operator
 * graph's after its mark. Returns the forwards' events and each operator's kernel time per run, µs.
 */
async function profileInPage(): Promise<{ forwards: OrtProfileEvent[]; operators: Map<string, number> }> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("bench:ops needs Chromium: install it or set CHROMIUM_PATH");
  const server = await createServer({ logLevel: "warn", server: { port: 0, hmr: false, watch: null } });
  await server.listen();
  const browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
  try {
    const page = await browser.newPage();
    const printed: string[] = [];
    page.on("console", (message) => printed.push(message.text()));
    await page.goto(server.resolvedUrls!.local[0]!, { timeout: 180_000 });
    const sent = {
      module: MODULE,
      prompt: demo.input.prompt,
      image: Array.from(image),
      forwards: FORWARDS,
      operator: { floats: OPERATOR_FLOATS, runs: OPERATOR_RUNS, seed: OPERATOR_SEED },
    };
    // The dev server may reload the page once while it optimises dependencies: retry after a reload.
    for (let attempt = 0; ; attempt++) {
      try {
        await page.waitForLoadState("networkidle");
        await page.evaluate(async (arg) => {
          const bench = (await import(/* @vite-ignore */ arg.module)) as {
            profileForwards: typeof profileForwards;
            profileOperators: typeof profileOperators;
          };
          await bench.profileForwards({ prompt: arg.prompt, image: Uint8Array.from(arg.image) }, arg.forwards);
          await bench.profileOperators(arg.operator.floats, arg.operator.runs, arg.operator.seed);
        }, sent);
        break;
      } catch (error) {
        if (attempt >= 2 || !String(error).includes("context was destroyed")) throw error;
        printed.length = 0;
      }
    }
    const [forwards = "", ...operators] = printed.join("\n").split(OPERATOR_MARK);
    const times = new Map<string, number>();
    for (const text of operators) {
      const op = text.slice(0, text.indexOf("\n")).trim();
      times.set(op, opKernelTimes(profileEventsInText(text)).get(op) ?? NaN);
    }
    return { forwards: profileEventsInText(forwards), operators: times };
  } finally {
    await browser.close();
    await server.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "evalrx-ops-"));
try {
  const node = opKernelTimes(await profileOnNode(dir));
  const nodeOperators = await profileOperatorsOnNode(dir);
  const page = await profileInPage();
  console.log(
    `kernel time per forward of tiny-vlm by operator type, page (ONNX Runtime Web, WASM) vs onnxruntime-node ${ort.env.versions.common}, 1 thread each; each node's median over the last ${FORWARDS / 2} of ${FORWARDS} forwards:`,
  );
  for (const line of opComparisonLines(opKernelTimes(page.forwards), node)) console.log(`  ${line}`);
  console.log(
    `one operator alone over ${OPERATOR_FLOATS} standard-normal floats, kernel time per float, page vs Node; median over the last ${OPERATOR_RUNS / 2} of ${OPERATOR_RUNS} runs:`,
  );
  for (const { op } of SINGLE_OPERATORS) {
    const [p, n] = [page.operators.get(op) ?? NaN, nodeOperators.get(op) ?? NaN].map(
      (us) => (us * 1000) / OPERATOR_FLOATS,
    );
    console.log(`  ${op.padEnd(24)} ${p!.toFixed(2)} ns vs ${n!.toFixed(2)} ns → ${(p! / n!).toFixed(2)}×`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
