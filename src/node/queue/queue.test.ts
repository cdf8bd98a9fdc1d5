import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Progress } from "../../core/index.ts";
import { FileStore } from "../../store/files.node.ts";
import type { ItemRecord } from "../../store/types.ts";
import { runCompanionEval, type EvalJobContext } from "../companion/eval-job.ts";
import { ModelCache } from "../companion/models.ts";
import type { EvalJobBody } from "../companion/protocol.ts";
import { parseRedisUrl, requireNoEviction } from "./redis.ts";
import { startRedis, type ThrowawayRedis } from "./redis-harness.ts";
import { openTrialQueue } from "./trials.ts";
import { startTrialWorker } from "./worker.ts";
import { TRIAL_QUEUE, type TrialData } from "./trial-data.ts";
import { prng } from "../fault-harness.ts";

const BIN = new URL("../bin.mjs", import.meta.url).pathname;
const POPE = readFileSync(new URL("../../../public/demo/pope.jsonl", import.meta.url), "utf8");
const DEMO = new URL("../../../public/demo/", import.meta.url).pathname;

let redis: ThrowawayRedis;
let dir: string;
let store: FileStore;
const models = new ModelCache();
const children = new Set<ChildProcess>();

function worker(env: Record<string, string> = {}, lockSeconds = 1): ChildProcess {
  const child = spawn(process.execPath, [BIN, "worker", "--queue", redis.url, "--lock-seconds", String(lockSeconds)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Resolves once the worker says it is taking trials. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes("taking trials from")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the worker exited (${code}) before it was ready: ${err}`)));
  });
}

/** 80 pope cases × 2 sampled repeats with a declared seed: the same trials whoever runs them. */
function job(runId: string): EvalJobBody {
  return {
    kind: "eval",
    config: {
      dataset: "pope",
      model: "tiny-vlm",
      evaluators: ["yesNo"],
      repeats: 2,
      generation: { maxNewTokens: 3, temperature: 0.8, seed: 16 },
    },
    cases: POPE.split("\n").filter(Boolean).slice(0, 80).join("\n"),
    runId,
  };
}

function context(trials?: EvalJobContext["trials"]): EvalJobContext {
  return {
    store,
    dataRoot: DEMO,
    models,
    ...(trials ? { trials } : {}),
    signal: new AbortController().signal,
    emit: () => undefined,
    onProgress: (_: Progress) => undefined,
  };
}

/** What a run decided, item by item, without what differs by machine and time. */
const verdicts = (items: readonly ItemRecord[]) =>
  items.map(({ index, caseId, repeat, output, passed, checks, error }) => ({
    index,
    caseId,
    repeat,
    output,
    passed,
    checks,
    error,
  }));

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), "evalrx-queue-"));
  store = await FileStore.open(join(dir, "store"));
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await models.dispose();
  await store?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the queue's Redis", () => {
  it("is named by a redis:// URL; anything else is refused with what was expected", () => {
    expect(parseRedisUrl("redis://127.0.0.1:6380/2")).toMatchObject({ host: "127.0.0.1", port: 6380, db: 2 });
    expect(parseRedisUrl("redis://:secret@10.0.0.5").shown).toBe("redis://10.0.0.5");
    expect(() => parseRedisUrl("http://127.0.0.1:6379")).toThrow(/is not a redis:\/\/ URL/);
    expect(() => parseRedisUrl("127.0.0.1:6379")).toThrow(/not a redis:\/\/ URL|not a URL/);
  });

  it("must keep every key (noeviction): an evicting Redis is refused, saying how to set it", async () => {
    const address = parseRedisUrl(redis.url);
    await expect(requireNoEviction(address, () => undefined)).resolves.toBeUndefined();
    const admin = new Redis(redis.port, "127.0.0.1");
    try {
      await admin.config("SET", "maxmemory-policy", "allkeys-lru");
      await expect(requireNoEviction(address, () => undefined)).rejects.toThrow(
        /evicts keys when full \(maxmemory-policy 'allkeys-lru'\).*CONFIG SET maxmemory-policy noeviction/,
      );
      await expect(openTrialQueue(redis.url)).rejects.toThrow(/evicts keys/);
    } finally {
      await admin.config("SET", "maxmemory-policy", "noeviction");
      admin.disconnect();
    }
  });
});

describe("a run split into work items on BullMQ", () => {
  it("survives its workers being killed -9 at 10 seeded points: the run equals an uninterrupted one", async () => {
    const uninterrupted = await runCompanionEval(job("uninterrupted"), context());
    expect(uninterrupted.status).toBe("finished");

    const queue = await openTrialQueue(redis.url, { warn: () => undefined });
    const random = prng(16);
    let kills = 0;
    let done = false;
    const life = () => {
      if (done) return;
      // Each life dies -9 in the middle of a seeded item (its 1st to 8th), until 10 kills; then workers live on.
      const after = kills + children.size < 10 ? Math.floor(random() * 8) : undefined;
      const child = worker(after !== undefined ? { EVALRX_WORKER_KILL_AFTER: String(after) } : {});
      child.once("exit", (_code, signal) => {
        if (signal === "SIGKILL" && !done) kills++;
        life();
      });
    };
    life();
    life();
    try {
      const queued = await runCompanionEval(job("queued"), context(queue.trials));
      done = true;
      expect(queued.status).toBe("finished");
      expect(kills).toBeGreaterThanOrEqual(10);
      const items = await store.items("queued");
      expect(items).toHaveLength(160);
      expect(new Set(items.map((i) => i.index)).size).toBe(160);
      expect((await store.progress("queued"))!.done).toBe(160);
      expect(verdicts(items)).toEqual(verdicts(await store.items("uninterrupted")));
      expect(queued.summary.pass).toEqual(uninterrupted.summary.pass);
      // The trials went out in batches: fewer work items than trials, several trials in one.
      const inspect = new Queue<TrialData>(TRIAL_QUEUE, { connection: { host: "127.0.0.1", port: redis.port } });
      try {
        const items = (await inspect.getJobs(["completed"])).filter((j) => j.data.runId === "queued");
        const trials = items.reduce((n, j) => n + j.data.trials.length, 0);
        expect(trials).toBe(160);
        expect(items.length).toBeLessThan(160);
        expect(Math.max(...items.map((j) => j.data.trials.length))).toBe(8);
      } finally {
        await inspect.close();
      }
    } finally {
      done = true;
      for (const child of children) child.kill("SIGTERM");
      await queue.close();
    }
  }, 120_000);

  it("holds the next item while one runs: with 2 held, items start before the one before them ends; with 1, never", async () => {
    const reference = await runCompanionEval(job("held-reference"), context());
    const queue = await openTrialQueue(redis.url, { warn: () => undefined });
    try {
      for (const held of [2, 1]) {
        // An item's start (processedOn) and end (finishedOn) as BullMQ recorded them, in the order they ended.
        const spans: { start: number; end: number }[] = [];
        const consumer = await startTrialWorker(redis.url, {
          concurrency: held,
          warn: () => undefined,
          onItem: (item) => spans.push({ start: item.processedOn!, end: item.finishedOn! }),
        });
        try {
          const run = await runCompanionEval(job(`held-${held}`), context(queue.trials));
          expect(run.status).toBe("finished");
          expect(verdicts(await store.items(`held-${held}`))).toEqual(verdicts(await store.items("held-reference")));
        } finally {
          await consumer.close();
        }
        expect(spans.length).toBeGreaterThan(1);
        // Started while the item before it still ran: fetched ahead, its round trip hidden behind the model.
        const ahead = spans.slice(1).filter((s, i) => s.start < spans[i]!.end).length;
        if (held === 2) expect(ahead).toBeGreaterThan(0);
        else expect(ahead).toBe(0);
      }
      expect(reference.status).toBe("finished");
    } finally {
      await queue.close();
    }
  }, 120_000);

  it("judges liveness by progress: an item held by a worker that stopped moving (its lock still renewed) goes to another", async () => {
    const queue = await openTrialQueue(redis.url, { stallMs: 1500, warn: () => undefined });
    // The wedged worker is alone when the run starts, so it takes an item; its 30 s lock would outlast the run.
    const wedged = worker({ EVALRX_WORKER_HANG: "1" }, 30);
    await ready(wedged);
    let healthy: ChildProcess | undefined;
    try {
      const body = job("liveness");
      const small: EvalJobBody = {
        ...body,
        config: { ...body.config, repeats: 1 },
        cases: POPE.split("\n").filter(Boolean).slice(0, 12).join("\n"),
      };
      const running = runCompanionEval(small, context(queue.trials));
      await new Promise((r) => setTimeout(r, 300));
      healthy = worker({}, 30);
      const run = await running;
      expect(run.status).toBe("finished");
      expect(await store.items("liveness")).toHaveLength(12);
      expect(queue.moved()).toBeGreaterThanOrEqual(1);
    } finally {
      wedged.kill("SIGKILL");
      healthy?.kill("SIGTERM");
      await queue.close();
    }
  }, 60_000);
});
