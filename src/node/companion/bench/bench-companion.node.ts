/**
 * npm run bench:companion — the companion and its queue, measured side by side in one run on the demo set
 * (public/demo/pope.jsonl, 600 cases, tiny-vlm, greedy, 3 new tokens):
 *
 * - throughput with 2 queue workers vs 1 (target ≥ 1.7× on 2 idle cores);
 * - queue overhead per work item: the same eval through the queue with 1 worker vs in this process (target ≤ 2 ms);
 * - a page-shaped job (cases and images sent inline, over HTTP, every store write streamed back) through a
 *   companion vs `evalrx eval` for the same eval (target ≤ 1.1×), both with the model loaded cold;
 * - the long kill sweep: workers killed -9 at `--kills N` seeded points (default 20), the run compared with
 *   the uninterrupted one.
 *
 * Each eval is run `--rounds` times (default 3) and the median kept. Prints the load average beside the numbers.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { FileStore } from "../../../store/files.node.ts";
import type { ItemRecord } from "../../../store/types.ts";
import { applyStoreOp, CompanionClient } from "../../../ui/companion/client.ts";
import { startRedis } from "../../queue/redis-harness.ts";
import { openTrialQueue, type TrialQueue } from "../../queue/trials.ts";
import { runCompanionEval, type EvalJobContext } from "../eval-job.ts";
import { ModelCache } from "../models.ts";
import type { EvalJobBody } from "../protocol.ts";
import { startCompanion } from "../server.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, kills: { type: "string", default: "20" } },
});
const ROUNDS = Number(values.rounds);
const KILLS = Number(values.kills);
const ROOT = new URL("../../../../", import.meta.url).pathname;
const BIN = join(ROOT, "src/node/bin.mjs");
const DEMO = join(ROOT, "public/demo");
const POPE = readFileSync(join(DEMO, "pope.jsonl"), "utf8");
const CONFIG = { dataset: "pope", model: "tiny-vlm", evaluators: ["yesNo"], generation: { maxNewTokens: 3 } };
const exec = promisify(execFile);

const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-companion-"));
const redis = await startRedis();
const store = await FileStore.open(join(dir, "store"));
const models = new ModelCache();
const children = new Set<ChildProcess>();
let runs = 0;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

function job(extra: Partial<EvalJobBody> = {}): EvalJobBody {
  return { kind: "eval", config: CONFIG, cases: POPE, runId: `bench-${++runs}`, ...extra };
}

function context(trials?: EvalJobContext["trials"]): EvalJobContext {
  return {
    store,
    dataRoot: DEMO,
    models,
    ...(trials ? { trials } : {}),
    signal: new AbortController().signal,
    emit: () => undefined,
    onProgress: () => undefined,
  };
}

function worker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, "worker", "--queue", redis.url, "--lock-seconds", "1"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes("taking trials from")) resolve(child);
    });
    child.once("exit", (code, signal) => {
      if (!err.includes("taking trials from")) reject(new Error(`worker exited (${code ?? signal}): ${err}`));
    });
  });
}

async function stopAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (c) =>
        new Promise((r) => {
          c.once("exit", r);
          c.kill("SIGTERM");
        }),
    ),
  );
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const verdicts = (items: readonly ItemRecord[]) =>
  JSON.stringify(items.map(({ index, output, passed, checks, error }) => [index, output, passed, checks, error]));

try {
  const trials = 600;
  console.log(
    `bench:companion — pope demo set, ${trials} trials per eval, median of ${ROUNDS}; load average ${load()}`,
  );

  // In this process (the model warm), then through the queue with 1 and with 2 workers (warmed by one eval each).
  await runCompanionEval(job(), context());
  const inProcess: number[] = [];
  for (let r = 0; r < ROUNDS; r++) inProcess.push(await timed(() => runCompanionEval(job(), context())));

  const queue: TrialQueue = await openTrialQueue(redis.url, { warn: () => undefined });
  await worker();
  await runCompanionEval(job(), context(queue.trials));
  const oneWorker: number[] = [];
  for (let r = 0; r < ROUNDS; r++) oneWorker.push(await timed(() => runCompanionEval(job(), context(queue.trials))));
  await worker();
  await runCompanionEval(job(), context(queue.trials));
  const twoWorkers: number[] = [];
  for (let r = 0; r < ROUNDS; r++) twoWorkers.push(await timed(() => runCompanionEval(job(), context(queue.trials))));
  await stopAll();

  const tIn = median(inProcess);
  const t1 = median(oneWorker);
  const t2 = median(twoWorkers);
  console.log(`in process       ${tIn.toFixed(0)} ms  (${((trials * 1000) / tIn).toFixed(0)} trials/s)`);
  console.log(`queue, 1 worker  ${t1.toFixed(0)} ms  (${((trials * 1000) / t1).toFixed(0)} trials/s)`);
  console.log(`queue, 2 workers ${t2.toFixed(0)} ms  (${((trials * 1000) / t2).toFixed(0)} trials/s)`);
  console.log(`throughput 2 workers / 1 worker: ${(t1 / t2).toFixed(2)}× (target ≥ 1.7× on 2 idle cores)`);
  console.log(`queue overhead per work item: ${((t1 - tIn) / trials).toFixed(2)} ms (target ≤ 2 ms)`);

  // A page-shaped job through a companion (its own process state: model cold) vs the CLI (a process, model cold).
  // As the page sends them: cases naming images by content hash, the images inline in base64.
  const images: Record<string, string> = {};
  const hashed = POPE.split("\n")
    .filter(Boolean)
    .map((line) => {
      const row = JSON.parse(line) as { input: { image?: string } };
      if (row.input.image) {
        const bytes = readFileSync(join(DEMO, row.input.image));
        const key = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
        images[key] = bytes.toString("base64");
        row.input.image = key;
      }
      return JSON.stringify(row);
    })
    .join("\n");
  const cfgPath = join(dir, "pope.json");
  writeFileSync(cfgPath, JSON.stringify({ ...CONFIG, dataset: join(DEMO, "pope.jsonl") }));
  const viaCompanion: number[] = [];
  const viaCli: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const companionStore = await FileStore.open(join(dir, `companion-${r}`));
    const replica = await FileStore.open(join(dir, `replica-${r}`));
    const companion = await startCompanion({ store: companionStore, dataRoot: DEMO, version: "bench" });
    const client = new CompanionClient({ url: companion.url, token: companion.token });
    viaCompanion.push(
      await timed(async () => {
        const { id } = await client.start({ ...job(), cases: hashed, images });
        for await (const m of client.messages(id)) if (m.type === "store") await applyStoreOp(replica, m.write);
      }),
    );
    await companion.close();
    await replica.close();
    await companionStore.close();
    viaCli.push(
      await timed(() =>
        exec(process.execPath, [BIN, "eval", cfgPath, "--store", join(dir, `cli-${r}`)], { cwd: ROOT }),
      ),
    );
  }
  const tc = median(viaCompanion);
  const tl = median(viaCli);
  console.log(
    `page job via companion ${tc.toFixed(0)} ms vs evalrx eval ${tl.toFixed(0)} ms: ${(tc / tl).toFixed(2)}× (target ≤ 1.1×)`,
  );

  // The long kill sweep: KILLS seeded kill -9 points; the run must equal the uninterrupted one (--kills 0 skips it).
  if (KILLS > 0) await killSweep(queue);
  await queue.close();
  console.log(`load average at the end ${load()}`);
} finally {
  for (const c of children) c.kill("SIGKILL");
  await models.dispose();
  await store.close();
  await redis.stop();
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}

async function killSweep(queue: TrialQueue): Promise<void> {
  let seed = 20261201;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  const sweepJob = job({
    config: { ...CONFIG, repeats: 2, generation: { maxNewTokens: 3, temperature: 0.8, seed: 5 } },
  });
  const reference = await runCompanionEval({ ...sweepJob, runId: "sweep-reference" }, context());
  let kills = 0;
  let done = false;
  const life = () => {
    if (done) return;
    const after = kills + children.size < KILLS ? Math.floor(random() * 40) : undefined;
    worker(after !== undefined ? { EVALRX_WORKER_KILL_AFTER: String(after) } : {})
      .then((child) =>
        child.once("exit", (_c, signal) => {
          if (signal === "SIGKILL" && !done) kills++;
          life();
        }),
      )
      .catch(() => life());
  };
  life();
  life();
  const tSweep = await timed(() => runCompanionEval({ ...sweepJob, runId: "sweep-killed" }, context(queue.trials)));
  done = true;
  await stopAll();
  const same = verdicts(await store.items("sweep-killed")) === verdicts(await store.items("sweep-reference"));
  console.log(
    `kill sweep: ${kills} kill -9 of workers over ${reference.summary.trials} trials in ${(tSweep / 1000).toFixed(1)} s; run equals the uninterrupted one: ${same ? "yes" : "NO"}; items taken back for silence: ${queue.moved()}`,
  );
  if (!same) process.exitCode = 1;
}
