import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import type { GenerateOptions, Model, ModelInput } from "../../core/index.ts";
import { trialSeed } from "../../evals/index.ts";
import type { TrialPlan } from "../companion/eval-job.ts";
import { connectionOptions, parseRedisUrl, requireNoEviction } from "./redis.ts";
import {
  encodeInput,
  TRIAL_QUEUE,
  trialJobId,
  type TrialData,
  type TrialProgress,
  type TrialResult,
} from "./trial-data.ts";

/** How the coordinator side of the queue behaves. */
export interface TrialQueueOptions {
  readonly warn?: (line: string) => void;
  /**
   * An item whose worker reported no progress for this long, while still
   * holding its lock, is taken from it and put back to wait (default 60 s).
   */
  readonly stallMs?: number;
  /** How many times an item is retried after its worker failed it (not counting stalls); default 5. */
  readonly attempts?: number;
}

/** The coordinator's side of the queue: it turns a run's trials into work items and waits for their answers. */
export interface TrialQueue {
  /** The Redis address, without credentials. */
  readonly address: string;
  /** The model a run's trials go through: each `generate` becomes one idempotent work item. */
  readonly trials: (plan: TrialPlan) => Model;
  /** Items moved back to wait because their worker stopped making progress (for tests and logs). */
  readonly moved: () => number;
  close(): Promise<void>;
}

class CancelledError extends Error {
  override readonly name = "CancelledError";
}

/**
 * Opens the queue on the Redis `url` names (refusing one that evicts keys),
 * and starts the watchdog that judges a worker's liveness by its progress:
 * an active item whose last progress is older than `stallMs` is taken back
 * (its lock is deleted, so BullMQ's stalled check puts it back to wait and the
 * silent worker can no longer complete it), even while its lock is renewed.
 *
 * @example const queue = await openTrialQueue("redis://127.0.0.1:6379"); startCompanion({ ..., trials: queue.trials })
 */
export async function openTrialQueue(url: string, options: TrialQueueOptions = {}): Promise<TrialQueue> {
  const address = parseRedisUrl(url);
  const warn = options.warn ?? ((line: string) => console.error(line));
  await requireNoEviction(address, warn);
  const connection = connectionOptions(address);
  const queue = new Queue<TrialData, TrialResult>(TRIAL_QUEUE, { connection });
  const events = new QueueEvents(TRIAL_QUEUE, { connection });
  await events.waitUntilReady();
  // Every trial in flight waits on these two: as many listeners as a run has trials in flight.
  queue.setMaxListeners(0);
  events.setMaxListeners(0);
  const admin = new Redis(connection);
  const stallMs = options.stallMs ?? 60_000;
  const attempts = options.attempts ?? 5;
  let moved = 0;

  const watchdog = setInterval(
    () => {
      void (async () => {
        const active = await queue.getJobs(["active"], 0, 999);
        const now = Date.now();
        for (const job of active) {
          const progress = job.progress as Partial<TrialProgress> | number | undefined;
          const at = typeof progress === "object" && progress?.at ? progress.at : (job.processedOn ?? now);
          if (now - at <= stallMs) continue;
          // The worker holds the lock but does nothing: without its lock it can no longer finish the item.
          const removed = await admin.del(`${queue.toKey(job.id!)}:lock`);
          if (removed) {
            moved++;
            const who = typeof progress === "object" && progress?.worker ? ` (worker ${progress.worker})` : "";
            warn(
              `queue: item ${job.id} made no progress for ${Math.round((now - at) / 1000)} s${who}; taken back for another worker`,
            );
          }
        }
      })().catch(() => undefined);
    },
    Math.max(100, Math.floor(stallMs / 4)),
  );
  watchdog.unref();

  const widened = new WeakSet<AbortSignal>();
  const trials = (plan: TrialPlan): Model => {
    // runEval derives each trial's seed from (base, case, repeat): that seed, with the prompt, names the trial.
    const byKey = new Map<string, { caseId: string; repeat: number }[]>();
    for (const row of plan.cases)
      for (let repeat = 0; repeat < plan.repeats; repeat++) {
        const key = `${trialSeed(plan.seedBase, row.id, repeat)}\u0000${row.input.prompt}`;
        const list = byKey.get(key) ?? [];
        list.push({ caseId: row.id, repeat });
        byKey.set(key, list);
      }
    const inner = plan.model;
    return {
      spec: inner.spec,
      capabilities: inner.capabilities,
      async generate(input: ModelInput, generateOptions: GenerateOptions = {}): Promise<string> {
        const { signal, attentionBias, ...rest } = generateOptions;
        if (attentionBias) throw new Error("an attention intervention cannot be sent through the queue");
        const list = byKey.get(`${rest.seed}\u0000${input.prompt}`);
        const trial = list?.shift();
        if (!trial)
          throw new Error(
            `the queue got a trial that is not in run '${plan.runId}''s plan (seed ${rest.seed}); this is a bug`,
          );
        signal?.throwIfAborted();
        // Each trial in flight listens on the run's signal while it waits: as many as are in flight.
        if (signal && !widened.has(signal)) {
          widened.add(signal);
          setMaxListeners(0, signal);
        }
        const data: TrialData = {
          runId: plan.runId,
          caseId: trial.caseId,
          repeat: trial.repeat,
          model: plan.name,
          identity: plan.identity,
          ...encodeInput(input),
          options: rest,
        };
        const job = await queue.add("trial", data, {
          jobId: trialJobId(plan.runId, trial.caseId, trial.repeat),
          attempts,
          backoff: { type: "fixed", delay: 250 },
          // Answers are read at once and then live in the store: keep only the last few in Redis.
          removeOnComplete: { age: 3600, count: 1000 },
          removeOnFail: { age: 24 * 3600 },
        });
        const answer = job.waitUntilFinished(events);
        let stop = () => undefined as void;
        const result = await (
          signal
            ? Promise.race([
                answer,
                new Promise<never>((_, reject) => {
                  stop = () => reject(new CancelledError("cancelled"));
                  if (signal.aborted) stop();
                  signal.addEventListener("abort", stop, { once: true });
                }),
              ])
            : answer
        )
          .finally(() => signal?.removeEventListener("abort", stop))
          .catch(async (error: unknown) => {
            // Cancelled while waiting: an item nobody has taken yet leaves the queue (an active one finishes unread).
            if (signal?.aborted) await job.remove().catch(() => undefined);
            throw error;
          });
        if ("error" in result) throw new Error(result.error);
        return result.output;
      },
      forward() {
        return Promise.reject(new Error("forward passes do not go through the queue; only generation does"));
      },
      dispose: () => Promise.resolve(),
    };
  };

  return {
    address: address.shown,
    trials,
    moved: () => moved,
    async close() {
      clearInterval(watchdog);
      await events.close();
      await queue.close();
      admin.disconnect();
    },
  };
}

/** Who this process is, in a worker's progress (so a log line can name the worker that went silent). */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}
