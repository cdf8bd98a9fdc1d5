import { Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { ModelInput } from "../../core/index.ts";
import { faultPoint } from "../faults.ts";
import { ModelCache, resolveModel } from "../companion/models.ts";
import { connectionOptions, parseRedisUrl, requireNoEviction } from "./redis.ts";
import {
  decodeImage,
  IMAGE_TTL_SECONDS,
  imageRedisKey,
  TRIAL_QUEUE,
  type EncodedImage,
  type TrialBatchResult,
  type TrialData,
  type TrialProgress,
  type TrialResult,
} from "./trial-data.ts";
import { workerName } from "./trials.ts";

/** How a trial worker runs. */
export interface TrialWorkerOptions {
  /** The `--models` folder (bundled models are always allowed). */
  readonly modelsRoot?: string;
  /**
   * Work items this process holds at once (default 2). The model runs one
   * item at a time (onnxruntime-node runs a session on the JS thread, with
   * one intra-op thread: one core per worker process); the others are the
   * next ones, fetched with their images while it runs, so the worker does not
   * sit idle for a Redis round trip between items.
   */
  readonly concurrency?: number;
  /**
   * How long an item's lock lasts without renewal (default 30 s): a worker
   * killed mid-item has its item retried by another worker once this passes.
   */
  readonly lockMs?: number;
  readonly warn?: (line: string) => void;
  /** Called after each item this worker finished (for logs and tests). */
  readonly onItem?: (job: Job<TrialData, TrialBatchResult>) => void;
}

export interface TrialWorker {
  /** Work items this process has answered. */
  readonly answered: () => number;
  /** Trials in them. */
  readonly trials: () => number;
  /**
   * Stops taking items and finishes the ones it holds (the waiting one gets
   * its turn), so none waits out its lock to be retried elsewhere.
   */
  close(): Promise<void>;
}

/** While a work item runs, its progress is written at most this often (each write is a Redis round trip). */
const BEAT_MS = 250;
/** Work items held at once by default: one runs, the next waits fetched, with its images read. */
export const HELD_ITEMS = 2;
/** Images a worker keeps by key, read last (a dataset's images recur across its splits and repeats). */
const KEPT_IMAGES = 512;

/**
 * Consumes the trial queue: each work item is a batch of generations with
 * the model it names, loaded once (a bundled key or a folder under
 * `--models`), checked against the run's fingerprint (a different copy of
 * the model refuses the item), with progress written as the item moves (the
 * coordinator judges liveness by it). A model error is that trial's answer; a
 * worker that dies leaves its item to be retried whole by the others once its
 * lock runs out (the trials are seeded, so a retry gives the same answers, and
 * the coordinator's store judges each trial once).
 *
 * Fault points for the kill tests: `EVALRX_FAULT_AT=worker-generate` (see
 * `faults.ts`) and `EVALRX_WORKER_KILL_AFTER=<n>` SIGKILL the process in the
 * middle of its first or its (n+1)-th trial (so mid-batch, with some of the
 * batch's trials done and lost); `EVALRX_WORKER_HANG=1` makes every item hang
 * forever while the lock stays renewed (a wedged worker).
 *
 * @example const worker = await startTrialWorker("redis://127.0.0.1:6379", { modelsRoot: "models" })
 */
export async function startTrialWorker(url: string, options: TrialWorkerOptions = {}): Promise<TrialWorker> {
  const address = parseRedisUrl(url);
  const warn = options.warn ?? ((line: string) => console.error(line));
  await requireNoEviction(address, warn);
  const models = new ModelCache(1);
  const me = workerName();
  const lockMs = options.lockMs ?? 30_000;
  let answered = 0;
  let trialsRun = 0;
  const hang = process.env["EVALRX_WORKER_HANG"] === "1";
  const killAfter = process.env["EVALRX_WORKER_KILL_AFTER"];
  let started = 0;
  // Read once: the fault point sits in every trial's path.
  const faultAtGenerate = process.env["EVALRX_FAULT_AT"]?.startsWith("worker-generate") ?? false;
  const images = new Redis(connectionOptions(address));
  // A dropped connection is retried by ioredis; a read that fails fails its item, which is retried.
  images.on("error", (error: Error) => warn(`worker ${me}: images: ${error.message}`));
  const kept = new Map<string, NonNullable<ModelInput["image"]>>();
  /** The item's images by key: those kept here, the others read from Redis in one round trip. */
  const imagesOf = async (job: Job<TrialData, TrialBatchResult>): Promise<NonNullable<ModelInput["image"]>[]> => {
    const keys = job.data.images;
    const missing = [...new Set(keys.filter((k) => !kept.has(k)))];
    if (missing.length) {
      const values = await images.mget(...missing.map(imageRedisKey));
      for (const [i, value] of values.entries()) {
        if (value === null)
          throw new Error(
            `work item ${job.id}: its image ${missing[i]} is not on Redis (an image stays ${IMAGE_TTL_SECONDS / 3600} h after its run last sent it); run the eval again`,
          );
        kept.set(missing[i]!, decodeImage(JSON.parse(value) as EncodedImage));
        if (kept.size > KEPT_IMAGES) kept.delete(kept.keys().next().value!);
      }
    }
    return keys.map((k) => {
      const image = kept.get(k)!;
      // Read last: it is kept longest.
      kept.delete(k);
      kept.set(k, image);
      return image;
    });
  };

  // The items this process holds, and the one whose trials run now (the model's turn passes from one to the next).
  const held = new Set<Job<TrialData, TrialBatchResult>>();
  let running: Job<TrialData, TrialBatchResult> | undefined;
  let turn: Promise<void> = Promise.resolve();
  let lastBeat = 0;
  /**
   * Writes every held item's progress: the running one's stage and trials
   * done, the waiting ones' as waiting. A waiting item moves only when the
   * running one does, so a wedged item silences them all and the watchdog
   * takes every one back.
   */
  const beat = async (stage: TrialProgress["stage"], done: number) => {
    lastBeat = Date.now();
    await Promise.all(
      [...held].map((job) =>
        job.updateProgress(
          job === running
            ? { at: lastBeat, stage, worker: me, done }
            : { at: lastBeat, stage: "waiting", worker: me, done: 0 },
        ),
      ),
    );
  };

  /** The oldest of the held items' last signs of life: its start (BullMQ's processedOn) or this process's last beat. */
  const lastSign = () => {
    let oldest = Infinity;
    for (const job of held) oldest = Math.min(oldest, Math.max(job.processedOn ?? Date.now(), lastBeat));
    return oldest;
  };

  const process_ = async (job: Job<TrialData, TrialBatchResult>): Promise<TrialBatchResult> => {
    const data = job.data;
    if (!Array.isArray(data.trials) || !Array.isArray(data.images) || data.images.some((k) => typeof k !== "string"))
      throw new Error(
        `work item ${job.id} holds no trials list with image keys; it was put there by an older companion`,
      );
    held.add(job);
    // Read while another item holds the model: this round trip then costs the worker no time.
    let itemImages: NonNullable<ModelInput["image"]>[];
    try {
      itemImages = await imagesOf(job);
    } catch (error) {
      held.delete(job);
      throw error;
    }
    const previous = turn;
    let pass = () => undefined as void;
    turn = new Promise<void>((resolve) => (pass = resolve));
    await previous;
    running = job;
    try {
      return await runItem(job, itemImages);
    } finally {
      running = undefined;
      held.delete(job);
      pass();
    }
  };

  /** Runs one held item's trials: the model is this item's until it returns. */
  const runItem = async (
    job: Job<TrialData, TrialBatchResult>,
    itemImages: readonly NonNullable<ModelInput["image"]>[],
  ): Promise<TrialBatchResult> => {
    const data = job.data;
    // A model not loaded yet may take a while: say so first, so the watchdog does not take the item back.
    const resolved = await resolveModel(data.model, options.modelsRoot);
    const cold = !models.has(resolved);
    if (cold) await beat("loading", 0);
    const loaded = await models.get(resolved);
    const want = JSON.stringify(data.identity);
    const have = JSON.stringify(loaded.identity);
    if (want !== have)
      throw new Error(
        `worker ${me}: its copy of model '${data.model}' (${have}) is not the one run '${data.runId}' was planned with (${want}); give this worker the same model files`,
      );
    // The item's start (BullMQ's processedOn) counts as its first beat: a beat costs a Redis round trip, and an item
    // of a few trials ends before the next one is due. After a load the time since the loading beat is reset.
    if (cold) await beat("generating", 0);
    if (hang) await new Promise<never>(() => undefined);
    const results: TrialResult[] = [];
    for (const [i, trial] of data.trials.entries()) {
      // A beat is due when a held item's last sign of life (its start, or the last beat) is BEAT_MS old: a waiting
      // item's start may be a whole item ago.
      if (Date.now() - lastSign() > BEAT_MS) await beat("generating", i);
      if (faultAtGenerate) faultPoint("worker-generate");
      // kill -9 in the middle of the (n+1)-th trial: a seeded point of a kill test.
      if (killAfter !== undefined && ++started > Number(killAfter)) process.kill(process.pid, "SIGKILL");
      const image = trial.image !== undefined ? itemImages[trial.image] : undefined;
      if (trial.image !== undefined && image === undefined)
        throw new Error(`work item ${job.id}: trial ${i} names image ${trial.image} of ${itemImages.length}`);
      try {
        const output = await loaded.model.generate(
          { prompt: trial.prompt, ...(image !== undefined ? { image } : {}) },
          trial.options,
        );
        results.push({ output });
      } catch (error) {
        results.push({ error: error instanceof Error ? error.message : String(error) });
      }
    }
    trialsRun += results.length;
    return { results };
  };

  let starting: Worker<TrialData, TrialBatchResult> | undefined;
  try {
    starting = new Worker<TrialData, TrialBatchResult>(TRIAL_QUEUE, process_, {
      connection: connectionOptions(address),
      concurrency: options.concurrency ?? HELD_ITEMS,
      lockDuration: lockMs,
      // How often this worker looks for items whose lock is gone (a dead worker's, or one the watchdog took back).
      stalledInterval: Math.max(200, Math.min(1000, Math.floor(lockMs / 2))),
      // A killed worker's item is retried however often workers die under it; the store keeps it judged once.
      maxStalledCount: 1_000_000,
    });
    starting.on("completed", (job) => {
      answered++;
      options.onItem?.(job);
    });
    starting.on("error", (error) => warn(`worker ${me}: ${error.message}`));
    await starting.waitUntilReady();
  } catch (error) {
    // A worker that cannot start leaves no connection behind to keep its process alive.
    await starting?.close(true).catch(() => undefined);
    images.disconnect();
    throw error;
  }
  const worker = starting;
  return {
    answered: () => answered,
    trials: () => trialsRun,
    async close() {
      await worker.close();
      images.disconnect();
      await models.dispose();
    },
  };
}
