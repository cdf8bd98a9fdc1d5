import { createHash } from "node:crypto";
import { basename, dirname, extname } from "node:path";
import type { Lesson } from "../../agent/lessons/lessons.ts";
import type { FailureCase, ImagePixels, Model, Progress } from "../../core/index.ts";
import { decodeDataUrl, importDataset, select } from "../../datasets/index.ts";
import { buildEvaluators, parseEvalConfig, runEval, type EvalSummary } from "../../evals/index.ts";
import type { Fingerprint } from "../../evals/fingerprint.ts";
import type { RunExport, Store } from "../../store/types.ts";
import { newRunId } from "../../store/run-id.ts";
import { modelImage, readConfined, RefusedFileError } from "../confined.ts";
import type { ModelCache } from "./models.ts";
import { resolveModel } from "./models.ts";
import type { EvalJobBody, StoreOp } from "./protocol.ts";
import { relayStore } from "./relay-store.ts";

/** The largest dataset file a job may name under `--data`. */
const MAX_DATASET_BYTES = 512 * 1024 * 1024;

/** Where a companion job runs: its store, the folders it may read, its models, and where its writes go. */
export interface EvalJobContext {
  /** The companion's own store (the runs it made, and the page's copies of runs it resumes). */
  readonly store: Store;
  /** The `--data` folder: dataset files and the images they name (undefined: none may be read). */
  readonly dataRoot?: string;
  /** The `--models` folder (undefined: bundled models only). */
  readonly modelsRoot?: string;
  readonly models: ModelCache;
  /**
   * Turns the loaded model into the one trials run on: the model itself (the
   * default), or one that sends each trial to a queue's workers.
   */
  readonly trials?: (plan: TrialPlan) => Model;
  /** How many trials to keep in flight when `trials` sends them away (default 64): the workers' throughput, not one model, sets the pace. */
  readonly trialsInFlight?: number;
  readonly signal: AbortSignal;
  readonly emit: (op: StoreOp) => void;
  /** Lessons an investigation recorded, for the page's lessons store (absent: they are kept nowhere). */
  readonly emitLessons?: (runId: string, lessons: readonly Lesson[]) => void;
  readonly onProgress: (p: Progress & { runId: string }) => void;
}

/** What a queue needs to know of a run to send its trials out: which model, which run, which trials. */
export interface TrialPlan {
  /** The model loaded here (its spec; trials run elsewhere). */
  readonly model: Model;
  /** The model as the job named it (a bundled key, or a folder under `--models`). */
  readonly name: string;
  readonly identity: Fingerprint["model"];
  readonly runId: string;
  readonly cases: readonly FailureCase[];
  readonly repeats: number;
  /** The base every trial's seed is derived from (`trialSeed`): the declared seed, else `run:<id>`. */
  readonly seedBase: number | string;
  /** The most trials the run has in flight at once (once all are waiting, no more come until one is answered). */
  readonly inFlight?: number;
}

export interface EvalJobOutcome {
  readonly runId: string;
  readonly status: string;
  readonly summary: EvalSummary;
}

function base64Bytes(text: string, what: string): Uint8Array {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text))
    throw new Error(`${what} is not base64 (expected the image's bytes in base64)`);
  return new Uint8Array(Buffer.from(text, "base64"));
}

/** The page's images, checked against the content hashes they are sent under. */
export function inlineImages(images: EvalJobBody["images"]): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  if (images === undefined) return out;
  if (typeof images !== "object" || images === null || Array.isArray(images))
    throw new Error('images must be an object { "sha256:<hex>": "<base64>" }');
  for (const [hash, text] of Object.entries(images)) {
    if (!/^sha256:[0-9a-f]{64}$/.test(hash))
      throw new Error(`images: key '${hash.slice(0, 80)}' is not sha256:<64 hex>`);
    const bytes = base64Bytes(text, `images['${hash}']`);
    const got = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    if (got !== hash)
      throw new Error(`images['${hash}']: the bytes hash to ${got}, not to the key they are sent under`);
    out.set(hash, bytes);
  }
  return out;
}

/**
 * Runs the page's eval job on this machine: the same `runEval` the page's
 * worker runs, on onnxruntime-node, with the page's cases and images (or a
 * dataset file under `--data`), writing to the companion's store through a
 * relay that hands every run write to the page. A resumed run starts from the
 * page's copy (`body.from`), so what the page already holds is never judged again.
 *
 * @example await runCompanionEval({ kind: "eval", config, cases, images, runId }, context)
 */
export async function runCompanionEval(body: EvalJobBody, context: EvalJobContext): Promise<EvalJobOutcome> {
  const config = parseEvalConfig(body.config);
  const { store } = context;

  // The cases: the page's (inline JSONL), or a dataset file confined to --data.
  let datasetId: string;
  let imported;
  const imageRoot: string | undefined = context.dataRoot;
  let imageBase = "";
  if (body.cases !== undefined) {
    if (typeof body.cases !== "string") throw new Error("cases must be the dataset's cases as JSONL text");
    datasetId = config.dataset;
    imported = await importDataset(body.cases, { format: "jsonl", name: `${datasetId}.jsonl` });
  } else {
    if (context.dataRoot === undefined)
      throw new RefusedFileError(
        `the job names dataset file '${config.dataset}' but the companion was started without --data DIR; send the cases, or restart it with --data`,
      );
    const bytes = await readConfined(context.dataRoot, config.dataset, { maxBytes: MAX_DATASET_BYTES });
    if (!bytes) throw new Error(`dataset '${config.dataset}' not found under the --data folder`);
    datasetId = basename(config.dataset, extname(config.dataset));
    imported = await importDataset(bytes, { name: basename(config.dataset) });
    imageBase = dirname(config.dataset) === "." ? "" : `${dirname(config.dataset)}/`;
  }
  if (imported.problems.length) {
    const shown = imported.problems.slice(0, 5).map((p) => `line ${p.line}: ${p.reason}`);
    throw new Error(
      `dataset '${config.dataset}': ${imported.problems.length} bad row(s) (${shown.join("; ")}${imported.problems.length > 5 ? "; …" : ""})`,
    );
  }
  const cases: FailureCase[] = select(
    imported.cases.filter((c) => c.status === "active"),
    config.select ?? {},
  );
  if (cases.length === 0)
    throw new Error(
      `the selection ${JSON.stringify(config.select ?? {})} leaves no case of dataset '${datasetId}' (${imported.cases.length} cases)`,
    );
  const sent = inlineImages(body.images);
  const images = async (ref: string): Promise<Uint8Array | ImagePixels> => {
    if (ref.startsWith("sha256:")) {
      const bytes = sent.get(ref) ?? (await store.getImage(ref))?.bytes;
      if (!bytes) throw new Error(`image ${ref} was not sent with the job`);
      return modelImage(bytes);
    }
    if (ref.startsWith("data:")) {
      const decoded = decodeDataUrl(ref);
      if (!(decoded instanceof Uint8Array)) throw new Error(`image data URL: ${decoded.reason}`);
      return modelImage(decoded);
    }
    if (imageRoot === undefined)
      throw new RefusedFileError(`image '${ref}' is a file path and the companion was started without --data DIR`);
    const bytes = await readConfined(imageRoot, imageBase + ref);
    if (!bytes) throw new Error(`image not found: '${ref}' (under the --data folder)`);
    return modelImage(bytes);
  };
  const evaluators = buildEvaluators(config.evaluators);

  // The model, loaded once per companion.
  const resolved = await resolveModel(config.model, context.modelsRoot);
  const loaded = await context.models.get(resolved);
  const identity: Fingerprint["model"] = loaded.identity;

  // A resumed run continues from the page's copy: the page's store is the truth.
  if (body.resume !== undefined) {
    if (typeof body.resume !== "string" || !body.resume) throw new Error("resume must be a run id");
    if (body.from !== undefined) await adoptRun(store, body.resume, body.from);
    else if (!(await store.getRun(body.resume)))
      throw new Error(`run '${body.resume}' is not in the companion's store; send the page's copy of it (from)`);
  }
  const evalKey = config.name ?? `${datasetId}:${evaluators.map((e) => e.name).join("+")}`;
  const runId = body.resume ?? body.runId ?? (await newRunId(store, evalKey));
  const relay = relayStore(store, context.emit);
  // Through a queue, many trials are in flight at once: the workers' throughput, not one model, sets the pace.
  const concurrency = context.trials
    ? Math.max(config.concurrency ?? 1, context.trialsInFlight ?? 64)
    : config.concurrency;
  const model = context.trials
    ? context.trials({
        model: loaded.model,
        name: config.model,
        identity,
        runId,
        cases,
        repeats: config.repeats ?? 1,
        seedBase: config.generation?.seed ?? `run:${runId}`,
        inFlight: concurrency!,
      })
    : loaded.model;
  const { run, summary } = await runEval({
    store: relay,
    dataset: { id: datasetId, cases },
    model,
    evaluators,
    ...(config.repeats !== undefined ? { repeats: config.repeats } : {}),
    ...(config.cluster !== undefined ? { cluster: config.cluster } : {}),
    ...(config.variant !== undefined ? { variant: config.variant } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(config.generation ? { generation: config.generation } : {}),
    ...(config.name !== undefined ? { evalKey: config.name } : {}),
    ...(body.resume !== undefined ? { resume: body.resume } : { runId }),
    images,
    modelIdentity: identity,
    ...(body.codeVersion !== undefined ? { codeVersion: String(body.codeVersion) } : {}),
    extraConfig: {
      select: config.select ?? {},
      page: { config: body.config, modelSource: body.modelSource ?? { kind: "bundled", key: config.model } },
    },
    signal: context.signal,
    onProgress: (p) => {
      context.onProgress({ ...p, runId });
    },
  });
  return { runId: run.id, status: run.status, summary };
}

/** Replaces the companion's copy of run `runId` with the page's (`from`), which is the truth. */
async function adoptRun(store: Store, runId: string, from: RunExport): Promise<void> {
  if (typeof from !== "object" || from === null || from.format !== "evalrx-run" || from.run?.id !== runId)
    throw new Error(`from must be the page's export of run '${runId}' (format 'evalrx-run')`);
  if (await store.getRun(runId)) await store.deleteRun(runId);
  await store.importRun({ ...from, dataset: undefined, cases: undefined, images: undefined } as RunExport);
}
