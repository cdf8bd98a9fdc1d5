/**
 * An eval run inside the model worker: the model, the store (IndexedDB is
 * reachable from workers) and the judging all live here, so the page only
 * sends a plain request and receives progress. It is the CLI's `evalrx eval`
 * with the page's sources: the dataset is a stored dataset, images come from
 * the store by content hash, and the run config is kept so a reload can
 * resume the run where it stopped.
 */
import type { FailureCase, ImagePixels, Model, Progress } from "../src/core/index.ts";
import { select } from "../src/datasets/index.ts";
import { buildEvaluators, parseEvalConfig, runEval, type EvalConfig, type EvalSummary } from "../src/evals/index.ts";
import { announceChange } from "../src/store/changes.browser.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import { newRunId } from "../src/store/run-id.ts";
import { latestEvery } from "./latest-every.ts";
import { imageReader } from "./stored-images.ts";
import { pooled, type SharedCopy } from "./model-copies.ts";
import { imageAffinityKey } from "./model-pool.ts";
import { bytes } from "../src/figures/format.ts";
import { toRgba } from "../src/models/image.ts";

import type { Fingerprint } from "../src/evals/fingerprint.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Model calls an eval keeps in flight per copy of the model, on two copies: eight. Each of an image's questions
 * goes to the copy that has the image in memory (`imageAffinityKey`), and a POPE image is asked six in a row, so
 * with two calls per copy every call in flight was often on one copy (`bench:app --only eval` at load 3 on 2 cores:
 * 0.86× the speed of one copy with 2, 0.97× with 8).
 */
const CALLS_PER_COPY = 8;

/**
 * Copies of the model an eval runs on unless the request says: one, the model worker's own. Measured side by side
 * (`npm run bench:app -- --only eval`, A B A B after a first eval, load 2.5–3 on 2 cores, another engineer's work
 * on the other core), two copies ran at 0.82–1.07× the speed of one over four runs, no clear gain: the second core
 * was not free, and the copies cost more CPU (their own memos, the calls crossing workers), 3.0–4.5 ms per trial in
 * the workers against 2.3–2.7 ms. On an idle machine two may win: measure it there before making 2 the default.
 */
export const DEFAULT_EVAL_COPIES: 1 | 2 = 1;

/** What the page asks the worker to run (plain data, structured-cloned across). */
export interface EvalJobRequest {
  /** IndexedDB database the page uses. */
  readonly db: string;
  /**
   * The eval in the CLI's config format, except that `dataset` names a stored
   * dataset (its id) and `model` the model loaded in this worker (its key).
   */
  readonly config: EvalConfig;
  /** How the page loads the model again to resume (kept in the run's config). */
  readonly modelSource: unknown;
  /** The new run's id (the page names it so it can show the run at once). */
  readonly runId?: string;
  /** Continue this interrupted run instead. */
  readonly resume?: string;
  /** The code version, for the run's fingerprint. */
  readonly codeVersion?: string;
  /**
   * Copies of the model the eval runs on (default `DEFAULT_EVAL_COPIES`): 1, the model worker's own; 2 adds the
   * loaded model's helper worker where there is one (started by the first eval that asks, kept while the model stays
   * loaded). The answers are the same either way: each trial's seed comes from its case and repeat, and items are
   * stored by index.
   */
  readonly copies?: 1 | 2;
}

/** Progress of one eval job, as the page sees it. */
export interface EvalJobProgress extends Progress {
  readonly runId: string;
  /** What went wrong without stopping the run so far (e.g. "no helper model worker (…); the model worker answers alone"). */
  readonly warnings?: readonly string[];
}

export interface EvalJobResult {
  readonly runId: string;
  readonly status: string;
  readonly summary: EvalSummary;
}

function isQuotaError(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === "QuotaExceededError" || (error as { quota?: boolean }).quota === true)
  );
}

/**
 * What a full quota means for a run: what is kept, and about how much more
 * space the rest needs (from the size of the items stored last).
 *
 * @example quotaMessage(400, 600, 512) // "The browser's storage is full: 400 of 600 trials are judged and kept; the other 200 need about 150.0 KB more. Free space (delete old runs or datasets), then Resume the run."
 */
export function quotaMessage(done: number, total: number, bytesPerItem: number): string {
  const rest = Math.max(0, total - done);
  return `The browser's storage is full: ${done} of ${total} trials are judged and kept; the other ${rest} need about ${bytes(rest * bytesPerItem * 1.5)} more. Free space (delete old runs or datasets), then Resume the run.`;
}

/**
 * A PNG's pixels, decoded here once per image rather than by the model once
 * per trial (runEval keeps the images it read; a POPE image is asked about
 * six times). The same decoder the model uses, so the pixels — and the
 * answers — are the same; anything else is handed on as it is, for the
 * model to read or refuse in its own words.
 *
 * @example decodedOnce(pngBytes) // → { width: 48, height: 48, data: Uint8ClampedArray(9216) }
 */
export function decodedOnce(bytes: Uint8Array): Uint8Array | ImagePixels {
  if (!PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return bytes;
  try {
    return toRgba(bytes);
  } catch {
    return bytes; // a broken or oversized PNG: the model refuses it in its own words, for each trial as before
  }
}

/**
 * Runs (or resumes) one eval in this worker with the loaded `model`.
 * Progress is reported at most every `progressEveryMs`, the latest never
 * held back longer (`latestEvery`), and once at the end: each report repaints the page (progress bar, rate, time left), and
 * on a 2-core machine those repaints took as much CPU as the judging, so 4
 * a second; `signal` cancels it, keeping what was judged.
 */
export async function runEvalJob(
  request: EvalJobRequest,
  model: Model,
  modelIdentity: Fingerprint["model"],
  signal: AbortSignal,
  onProgress: (p: EvalJobProgress) => void,
  progressEveryMs = 250,
  /** The loaded model's helper copy (`workers/model-copies.ts`): trials then run on two cores. */
  sharedCopy?: SharedCopy,
): Promise<EvalJobResult> {
  const config = parseEvalConfig(request.config);
  const store = await IdbStore.open(request.db);
  // Nothing is said after the job has ended (a progress kept for later included).
  let stopProgress = () => {};
  try {
    const dataset = await store.getDataset(config.dataset);
    if (!dataset)
      throw new Error(
        `the eval names dataset '${config.dataset}', which is not stored in this browser; import it on the Datasets page first`,
      );
    if (config.model !== model.spec.key)
      throw new Error(`the eval names model '${config.model}' but '${model.spec.key}' is loaded in the worker`);
    const all = await store.cases(dataset.id);
    const cases: FailureCase[] = select(
      all.filter((c) => c.status === "active"),
      config.select ?? {},
    );
    if (cases.length === 0)
      throw new Error(
        `the selection ${JSON.stringify(config.select ?? {})} leaves no case of dataset '${dataset.id}' (${all.length} cases)`,
      );
    const evaluators = buildEvaluators(config.evaluators);
    // The stored images are read ahead in batches (one transaction each) while the model works, and decoded when a
    // trial asks: a read waited for idles the worker.
    const read = imageReader(
      store,
      cases.flatMap((c) => c.input.image ?? []),
    );
    const images = async (ref: string): Promise<Uint8Array | ImagePixels> => decodedOnce(await read(ref));
    const runId =
      request.resume ??
      request.runId ??
      (await newRunId(store, config.name ?? `${dataset.id}:${evaluators.map((e) => e.name).join("+")}`));
    let latest: Progress | undefined;
    const warnings: string[] = [];
    const progress = latestEvery(progressEveryMs, (p: Progress) =>
      onProgress({ ...p, runId, ...(warnings.length ? { warnings: [...warnings] } : {}) }),
    );
    stopProgress = () => progress.stop();
    const report = (p: Progress, force = false) => {
      latest = p;
      progress.push(p, force || p.done >= p.total);
    };
    // The helper joins when it is ready (the first eval that asks starts it): the model worker begins at once.
    const copies = await pooled(model, (request.copies ?? DEFAULT_EVAL_COPIES) === 2 ? sharedCopy : undefined, {
      callsPerCopy: CALLS_PER_COPY,
      wait: false,
      // An image's questions meet one copy, which encodes the image once (each copy keeps its own memo).
      keyOf: imageAffinityKey,
      warn: (message) => {
        console.warn(`eval ${runId}: ${message}`);
        warnings.push(message);
        if (latest) report(latest, true);
      },
    });
    let result: Awaited<ReturnType<typeof runEval>>;
    try {
      result = await runEval({
        store,
        dataset: { id: dataset.id, cases },
        model: copies.model,
        evaluators,
        ...(config.repeats !== undefined ? { repeats: config.repeats } : {}),
        ...(config.cluster !== undefined ? { cluster: config.cluster } : {}),
        ...(config.variant !== undefined ? { variant: config.variant } : {}),
        ...(config.concurrency !== undefined
          ? { concurrency: config.concurrency }
          : copies.concurrency > 1
            ? { concurrency: copies.concurrency }
            : {}),
        ...(config.generation ? { generation: config.generation } : {}),
        ...(config.name !== undefined ? { evalKey: config.name } : {}),
        ...(request.resume !== undefined ? { resume: request.resume } : { runId }),
        images,
        modelIdentity,
        ...(request.codeVersion !== undefined ? { codeVersion: request.codeVersion } : {}),
        extraConfig: {
          select: config.select ?? {},
          page: { config: request.config, modelSource: request.modelSource },
        },
        signal,
        onProgress: (p) => {
          if (p.done === 0 || p.done === p.total) announceChange(request.db, { kind: "runs", id: runId });
          report(p);
        },
      });
    } catch (error) {
      announceChange(request.db, { kind: "runs", id: runId });
      if (!isQuotaError(error)) throw error;
      const progress = await store.progress(runId);
      const done = progress?.done ?? 0;
      const total = progress?.total ?? cases.length * (config.repeats ?? 1);
      const sample = await store.itemRange(runId, Math.max(0, done - 20), done);
      const perItem = sample.length ? JSON.stringify(sample).length / sample.length : 1024;
      throw new Error(quotaMessage(done, total, perItem), { cause: error });
    } finally {
      copies.close();
    }
    const { run, summary } = result;
    if (latest) report(latest, true);
    announceChange(request.db, { kind: "runs", id: run.id });
    return { runId: run.id, status: run.status, summary };
  } finally {
    stopProgress();
    await store.close();
  }
}
