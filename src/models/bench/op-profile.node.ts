/**
 * Where a forward's kernel time goes, page against Node, per operator type: the bundled tiny-vlm's forward (a demo
 * image and prompt, "yes" teacher-forced, no capture) `forwards` times on onnxruntime-node in this process and on
 * ONNX Runtime Web (WASM) in Chromium, every session profiled by ONNX Runtime itself; for each operator type the
 * typical kernel time per forward on each side and their ratio. This says which kernels make the page's forward
 * slower than Node's (`npm run bench:forward` says by how much): profiling slows both sides, so the times here
 * are larger than the forward bench's, and the ratios are what to read.
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
import type { profileForwards } from "./op-profile.browser.ts";
import { opComparisonLines, opKernelTimes, profileEventsInText, type OrtProfileEvent } from "./op-profile.ts";

const FORWARDS = 400;
const MODULE = "/src/models/bench/op-profile.browser.ts";

const first = readFileSync(`${REPO_ROOT}public/demo/pope.jsonl`, "utf8").split("\n")[0] ?? "{}";
const demo = JSON.parse(first) as { input: { prompt: string; image: string } };
const image = new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${demo.input.image}`));

/** Node: each session writes its profile into `dir` (ONNX Runtime names the files). */
async function profileOnNode(dir: string): Promise<OrtProfileEvent[]> {
  const sessions: ort.InferenceSession[] = [];
  const profiled: SessionFactory = async (bytes) => {
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ["cpu"],
      intraOpNumThreads: 1,
      enableProfiling: true,
      profileFilePrefix: join(dir, "node"),
    });
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
  return readdirSync(dir)
    .filter((f) => f.startsWith("node") && f.endsWith(".json"))
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as OrtProfileEvent[]);
}

/** The page: the WASM build prints the events to the console. */
async function profileInPage(): Promise<OrtProfileEvent[]> {
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
    const sent = { module: MODULE, prompt: demo.input.prompt, image: Array.from(image), forwards: FORWARDS };
    // The dev server may reload the page once while it optimises dependencies: retry after a reload.
    for (let attempt = 0; ; attempt++) {
      try {
        await page.waitForLoadState("networkidle");
        await page.evaluate(async (arg) => {
          const bench = (await import(/* @vite-ignore */ arg.module)) as { profileForwards: typeof profileForwards };
          await bench.profileForwards({ prompt: arg.prompt, image: Uint8Array.from(arg.image) }, arg.forwards);
        }, sent);
        break;
      } catch (error) {
        if (attempt >= 2 || !String(error).includes("context was destroyed")) throw error;
        printed.length = 0;
      }
    }
    return profileEventsInText(printed.join("\n"));
  } finally {
    await browser.close();
    await server.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "evalrx-ops-"));
try {
  const node = opKernelTimes(await profileOnNode(dir));
  const page = opKernelTimes(await profileInPage());
  console.log(
    `kernel time per forward of tiny-vlm by operator type, page (ONNX Runtime Web, WASM) vs onnxruntime-node ${ort.env.versions.common}, 1 thread each; each node's median over the last ${FORWARDS / 2} of ${FORWARDS} forwards:`,
  );
  for (const line of opComparisonLines(page, node)) console.log(`  ${line}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
