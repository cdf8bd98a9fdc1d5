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
  IMAGE_TTL_SECONDS,
  imageKey,
  imageRedisKey,
  TRIAL_QUEUE,
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
   * per item; a tiny model's trial is ~3 ms, so one trial per item would spend
   * a large share of the time on the queue.
   */
  readonly batch?: number;
  /**
   * How long a part-filled batch waits for more trials while other items keep
   * the workers busy (default 200 ms). A part-filled batch goes at once when
   * no more trials can come (the run's trials in flight are all here, or its
   * last trial is), or when fewer than two items are out (a worker would soon sit idle).
   */
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
  /** Work items added so far, over every run (a benchmark divides by it). */
  readonly items: () => number;
  close(): Promise<void>;
}

/** While fewer items than this are out, a part-filled batch goes at once: the workers are about to run dry. */
const LOW_WATER = 2;

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
  let added = 0;

  const watchdog = setInterval(
    () => {
      void (async () => {
        const active = await queue.getJobs(["active"], 0, 999);
        const now = Date.now();
        for (const job of active) {
          const progress = job.progress as Partial<TrialProgress> | number | undefined;
          // The later of its last beat and its start: a retried item keeps the beats of the attempt before.
          const beat = typeof progress === "object" && progress?.at ? progress.at : 0;
          const at = Math.max(beat, job.processedOn ?? now);
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
  const lingerMs = options.lingerMs ?? 200;
  const inFlight = options.inFlight ?? Math.max(64, batchSize * 8);

  // One listener for every item's answer (BullMQ's waitUntilFinished costs a Redis round trip and three listeners
  // per item): the item is registered before it is added, so its answer cannot pass unseen. An item that was on the
  // queue already (the same trials of a resumed run) answers nothing new: its state is read once.
  const answers = new Map<string, { resolve: (r: TrialBatchResult) => void; reject: (e: unknown) => void }>();
  const settle = (jobId: string, outcome: { result: TrialBatchResult } | { error: unknown }) => {
    const waiter = answers.get(jobId);
    if (!waiter) return;
    answers.delete(jobId);
    if ("result" in outcome) waiter.resolve(outcome.result);
    else waiter.reject(outcome.error);
  };
  events.on("completed", ({ jobId, returnvalue }) =>
    settle(jobId, { result: returnvalue as unknown as TrialBatchResult }),
  );
  events.on("failed", ({ jobId, failedReason }) => settle(jobId, { error: new Error(failedReason) }));
  events.on("duplicated", ({ jobId }) => {
    if (!answers.has(jobId)) return;
    void queue.getJob(jobId).then(
      async (job) => {
        const state = job ? await job.getState() : "unknown";
        if (state === "completed") settle(jobId, { result: job!.returnvalue });
        else if (state === "failed") settle(jobId, { error: new Error(job!.failedReason) });
        // Waiting or active: its own completed or failed event is still to come.
      },
      (error: unknown) => settle(jobId, { error }),
    );
  });

  // Images by content: each image object hashed once, and its bytes put on Redis once (again when half its time
  // there has passed), so a work item carries its images' keys only.
  const keys = new WeakMap<object, string>();
  const keyOf = (image: NonNullable<ModelInput["image"]>): string => {
    let key = keys.get(image);
    if (key === undefined) keys.set(image, (key = imageKey(image)));
    return key;
  };
  const sentAt = new Map<string, number>();
  const upload = async (batch: readonly { input: ModelInput }[], wanted: readonly string[]): Promise<void> => {
    const now = Date.now();
    const stale = (key: string) => now - (sentAt.get(key) ?? -Infinity) > (IMAGE_TTL_SECONDS * 1000) / 2;
    if (!wanted.some(stale)) return;
    const write = admin.multi();
    const done = new Set<string>();
    for (const { input } of batch) {
      if (input.image === undefined) continue;
      const key = keyOf(input.image);
      if (done.has(key) || !stale(key)) continue;
      done.add(key);
      write.set(imageRedisKey(key), JSON.stringify(encodeImage(input.image)), "EX", IMAGE_TTL_SECONDS);
    }
    const answers = (await write.exec()) ?? [];
    const failed = answers.find(([error]) => error);
    if (failed) throw new Error(`cannot put a work item's image on Redis: ${failed[0]!.message}`);
    // A long-lived coordinator forgets what it sent rather than growing without bound; it sends it again.
    if (sentAt.size > 100_000) sentAt.clear();
    for (const key of done) sentAt.set(key, now);
  };

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
    const planned = plan.cases.length * plan.repeats;
    // The most trials the run has in flight at once: once they are all here, no more come until an answer does.
    const runInFlight = plan.inFlight ?? inFlight;

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
    /** Trials asked for so far, and those sent in items not answered yet. */
    let asked = 0;
    let out = 0;
    let itemsOut = 0;

    /** Adds one work item; `answered` is called once per trial when its caller has its answer (or error). */
    const send = async (batch: readonly Waiting[], answered: () => void): Promise<void> => {
      // Trials of one image (several questions per image) name it once; its bytes go to Redis once.
      const imageIndex = new Map<object, number>();
      const images: string[] = [];
      const inputs: TrialInput[] = batch.map((w) => {
        const image = w.input.image;
        let index: number | undefined;
        if (image !== undefined) {
          index = imageIndex.get(image);
          if (index === undefined) {
            index = images.push(keyOf(image)) - 1;
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
      await upload(batch, images);
      const data: TrialData = { runId: plan.runId, model: plan.name, identity: plan.identity, trials: inputs, images };
      const jobId = batchJobId(plan.runId, inputs);
      const answer = new Promise<TrialBatchResult>((resolve, reject) => answers.set(jobId, { resolve, reject }));
      let job;
      try {
        job = await queue.add("trials", data, {
          jobId,
          attempts,
          backoff: { type: "fixed", delay: 250 },
          // Answers are read at once and then live in the store: keep only the last few in Redis.
          removeOnComplete: { age: 3600, count: 1000 },
          removeOnFail: { age: 24 * 3600 },
        });
      } catch (error) {
        answers.delete(jobId);
        throw error;
      }
      // Each trial's caller stops waiting when its own signal aborts; an item nobody took yet then leaves the queue.
      let left = batch.length;
      for (const [i, w] of batch.entries()) {
        let stop = () => undefined as void;
        const cancelled = w.signal
          ? new Promise<never>((_, reject) => {
              stop = () => {
                reject(new CancelledError("cancelled"));
                if (--left === 0) {
                  answers.delete(jobId);
                  void job.remove().catch(() => undefined);
                }
              };
              if (w.signal!.aborted) stop();
              else w.signal!.addEventListener("abort", stop, { once: true });
            })
          : undefined;
        const mine = answer.then((result) => {
          const one = result.results[i];
          if (one === undefined)
            throw new Error(
              `work item ${jobId} came back with ${result.results.length} answers for ${batch.length} trials`,
            );
          if ("error" in one) throw new Error(one.error);
          return one.output;
        });
        (cancelled ? Promise.race([mine, cancelled]) : mine)
          .finally(() => w.signal?.removeEventListener("abort", stop))
          .then(w.resolve, w.reject)
          .finally(answered);
      }
    };

    const dispatch = (batch: Waiting[]) => {
      added++;
      out += batch.length;
      itemsOut++;
      let unanswered = batch.length;
      const answered = () => {
        out--;
        if (--unanswered > 0) return;
        itemsOut--;
        // The workers may run dry: what waits goes now rather than after the linger.
        if (itemsOut < LOW_WATER && waiting.length > 0) flush(true);
      };
      send(batch, answered).catch((error: unknown) => {
        for (const w of batch) w.reject(error);
        while (unanswered > 0) answered();
      });
    };

    /** Sends every full batch; a part-filled one too when `all`, else it waits for more trials (at most lingerMs). */
    const flush = (all = false) => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      while (waiting.length >= batchSize || (all && waiting.length > 0)) {
        const batch = waiting.slice(0, batchSize);
        waiting = waiting.slice(batch.length);
        dispatch(batch);
      }
      if (waiting.length > 0) timer = setTimeout(() => flush(true), lingerMs);
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
        asked++;
        return new Promise<string>((resolve, reject) => {
          waiting.push({ ...trial, input, options: rest, signal, resolve, reject });
          // No more trials can come before an answer does (all the run's trials in flight are here, or this was
          // its last), or no item is out: a part-filled batch goes now. Otherwise full batches only.
          if (out + waiting.length >= runInFlight || asked >= planned) flush(true);
          else {
            flush();
            // Few items are out (the run's first trials): what is left waits only a moment for the rest of its batch.
            if (itemsOut < LOW_WATER && timer !== undefined) {
              clearTimeout(timer);
              timer = setTimeout(() => flush(true), Math.min(lingerMs, 2));
            }
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
    items: () => added,
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
