import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import type { GenerateOptions, Model, ModelInput } from "../../core/index.ts";
import { trialSeed } from "../../evals/index.ts";
import type { TrialPlan } from "../companion/eval-job.ts";
import { connectionOptions, parseRedisUrl, requireNoEviction } from "./redis.ts";
import {
  batchJobId,
  encodeImage,
  TRIAL_QUEUE,
  type EncodedImage,
  type TrialBatchResult,
  type TrialData,
  type TrialInput,
  type TrialProgress,
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
  /**
   * Trials per work item (default 8). The queue costs a few Redis round trips
   * per item (~2.5 ms); a tiny model's trial is ~3 ms, so one trial per item
   * would spend nearly half the time on the queue.
   */
  readonly batch?: number;
  /** How long a part-filled batch waits for more trials before it is sent anyway (default 2 ms). */
  readonly lingerMs?: number;
  /** How many trials a run keeps in flight through the queue (default max(64, 8 × batch)): enough to keep every worker fed. */
  readonly inFlight?: number;
}

/** The coordinator's side of the queue: it turns a run's trials into work items and waits for their answers. */
export interface TrialQueue {
  /** The Redis address, without credentials. */
  readonly address: string;
  /**
   * The model a run's trials go through: its `generate` calls are gathered
   * into batches of up to `batch` trials, each one idempotent work item.
   */
  readonly trials: (plan: TrialPlan) => Model;
  /** How many trials a run should keep in flight to keep the workers fed. */
  readonly inFlight: number;
  /** Trials per work item. */
  readonly batch: number;
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
  const queue = new Queue<TrialData, TrialBatchResult>(TRIAL_QUEUE, { connection });
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

  const batchSize = options.batch ?? 8;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`openTrialQueue(): batch ${batchSize} must be a positive integer (trials per work item)`);
  const lingerMs = options.lingerMs ?? 2;
  const inFlight = options.inFlight ?? Math.max(64, batchSize * 8);

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

    /** A trial waiting for its batch to be sent, and the caller waiting for its answer. */
    interface Waiting {
      readonly caseId: string;
      readonly repeat: number;
      readonly input: ModelInput;
      readonly options: Omit<GenerateOptions, "signal" | "attentionBias">;
      readonly signal: AbortSignal | undefined;
      readonly resolve: (output: string) => void;
      readonly reject: (error: unknown) => void;
    }
    let waiting: Waiting[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;

    const send = async (batch: readonly Waiting[]): Promise<void> => {
      // Trials of one image (several questions per image) carry it once.
      const imageIndex = new Map<object, number>();
      const images: EncodedImage[] = [];
      const inputs: TrialInput[] = batch.map((w) => {
        const image = w.input.image;
        let index: number | undefined;
        if (image !== undefined) {
          index = imageIndex.get(image);
          if (index === undefined) {
            index = images.push(encodeImage(image)) - 1;
            imageIndex.set(image, index);
          }
        }
        return {
          caseId: w.caseId,
          repeat: w.repeat,
          prompt: w.input.prompt,
          ...(index !== undefined ? { image: index } : {}),
          options: w.options,
        };
      });
      const data: TrialData = { runId: plan.runId, model: plan.name, identity: plan.identity, trials: inputs, images };
      const job = await queue.add("trials", data, {
        jobId: batchJobId(plan.runId, inputs),
        attempts,
        backoff: { type: "fixed", delay: 250 },
        // Answers are read at once and then live in the store: keep only the last few in Redis.
        removeOnComplete: { age: 3600, count: 1000 },
        removeOnFail: { age: 24 * 3600 },
      });
      const answer = job.waitUntilFinished(events) as Promise<TrialBatchResult>;
      // Each trial's caller stops waiting when its own signal aborts; an item nobody took yet then leaves the queue.
      let left = batch.length;
      for (const [i, w] of batch.entries()) {
        let stop = () => undefined as void;
        const cancelled = w.signal
          ? new Promise<never>((_, reject) => {
              stop = () => {
                reject(new CancelledError("cancelled"));
                if (--left === 0) void job.remove().catch(() => undefined);
              };
              if (w.signal!.aborted) stop();
              else w.signal!.addEventListener("abort", stop, { once: true });
            })
          : undefined;
        const mine = answer.then((result) => {
          const one = result.results[i];
          if (one === undefined)
            throw new Error(
              `work item ${job.id} came back with ${result.results.length} answers for ${batch.length} trials`,
            );
          if ("error" in one) throw new Error(one.error);
          return one.output;
        });
        (cancelled ? Promise.race([mine, cancelled]) : mine)
          .finally(() => w.signal?.removeEventListener("abort", stop))
          .then(w.resolve, w.reject);
      }
    };

    const flush = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      while (waiting.length > 0) {
        const batch = waiting.slice(0, batchSize);
        waiting = waiting.slice(batch.length);
        send(batch).catch((error: unknown) => {
          for (const w of batch) w.reject(error);
        });
        if (waiting.length < batchSize) break;
      }
      // What is left (less than a batch) goes once no further trial has come for lingerMs.
      if (waiting.length > 0) timer = setTimeout(flush, lingerMs);
    };

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
        return new Promise<string>((resolve, reject) => {
          waiting.push({ ...trial, input, options: rest, signal, resolve, reject });
          if (waiting.length >= batchSize) flush();
          else {
            if (timer !== undefined) clearTimeout(timer);
            timer = setTimeout(flush, lingerMs);
          }
        });
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
    inFlight,
    batch: batchSize,
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
