/**
 * Where the time of a generate + probe forward goes, per ONNX session, on
 * onnxruntime-node and in a worker on ONNX Runtime Web (WASM, 1 and 2
 * threads), rounds interleaved. `npx tsx src/models/bench/session-profile.node.ts`.
 */
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { createServer } from "vite";
import { chromiumArgs, chromiumPath } from "../../node/chromium.mjs";
import { loadOrtModel } from "../ort-model.ts";
import { nodeFiles, nodeSessions } from "../ort-session.node.ts";
import { REPO_ROOT } from "../load.node.ts";
import { profiledSessions, type SessionProfile } from "./session-profile.ts";
import { runWorkload, type WorkloadTimes } from "./session-profile-workload.ts";

const lines = readFileSync(`${REPO_ROOT}public/demo/pope.jsonl`, "utf8").trim().split("\n").slice(0, 12);
const inputs = lines.map((l) => {
  const c = JSON.parse(l) as { input: { prompt: string; image: string } };
  return { prompt: c.input.prompt, image: new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${c.input.image}`)) };
});
const rounds = Number(process.argv[2] ?? 3);
const threadCounts = (process.argv[3] ?? "1,2").split(",").map(Number);
const nodeProfile: SessionProfile = {};
const model = await loadOrtModel(
  nodeFiles(`${REPO_ROOT}models/tiny-vlm`),
  profiledSessions(nodeSessions, nodeProfile),
  {
    key: "tiny-vlm",
  },
);
const server = await createServer({ logLevel: "warn", server: { port: 0, hmr: false, watch: null } });
await server.listen();
const browser = await chromium.launch({ executablePath: chromiumPath()!, args: chromiumArgs, headless: true });
type Out = { times: WorkloadTimes; profile: SessionProfile; threads: number; isolated: boolean };
try {
  const page = await browser.newPage();
  page.on("console", (m) => console.log("page:", m.text()));
  await page.goto(server.resolvedUrls!.local[0]!, { timeout: 180_000 });
  await page.waitForLoadState("networkidle");
  const sent = inputs.map((i) => ({ prompt: i.prompt, image: Array.from(i.image) }));
  const inPage = (threads: number, n: number) =>
    page.evaluate(
      async ({ module, sent, threads, n }) => {
        const m = (await import(/* @vite-ignore */ module)) as {
          profileInWorker: (t: number, i: unknown[], r: number) => Promise<unknown>;
        };
        return m.profileInWorker(
          threads,
          sent.map((s) => ({ prompt: s.prompt, image: Uint8Array.from(s.image) })),
          n,
        );
      },
      { module: "/src/models/bench/session-profile.browser.ts", sent, threads, n },
    ) as Promise<Out>;
  // warm-up
  await runWorkload(model, inputs, 1);
  for (const t of threadCounts) await inPage(t, 1);
  const total: Record<string, { times: WorkloadTimes; profile: SessionProfile }> = {};
  const add = (key: string, times: WorkloadTimes, profile: SessionProfile) => {
    const entry = (total[key] ??= { times: { generateMs: 0, forwardMs: 0 }, profile: {} });
    entry.times = {
      generateMs: entry.times.generateMs + times.generateMs,
      forwardMs: entry.times.forwardMs + times.forwardMs,
    };
    for (const [name, p] of Object.entries(profile)) {
      const e = (entry.profile[name] ??= { runs: 0, ms: 0 });
      e.runs += p.runs;
      e.ms += p.ms;
    }
  };
  for (let r = 0; r < rounds; r++) {
    for (const key of Object.keys(nodeProfile)) delete nodeProfile[key];
    add("node", await runWorkload(model, inputs, 1), { ...nodeProfile });
    for (const t of threadCounts) {
      const out = await inPage(t, 1);
      add(`wasm ${out.threads} thread(s)${out.isolated ? "" : " NOT isolated"}`, out.times, out.profile);
    }
  }
  console.log(`load ${readFileSync("/proc/loadavg", "utf8").trim()}; ${rounds} rounds × ${inputs.length} cases`);
  for (const [key, { times, profile }] of Object.entries(total)) {
    console.log(
      `${key.padEnd(24)} generate ${times.generateMs.toFixed(0)} ms, forward ${times.forwardMs.toFixed(0)} ms`,
    );
    for (const [name, p] of Object.entries(profile))
      console.log(
        `    ${name.padEnd(40)} ${String(p.runs).padStart(5)} runs ${p.ms.toFixed(0).padStart(6)} ms  ${(p.ms / p.runs).toFixed(3)} ms/run`,
      );
  }
} finally {
  await browser.close();
  await server.close();
  await model.dispose();
}
