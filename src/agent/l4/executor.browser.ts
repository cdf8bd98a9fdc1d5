/**
 * L4 (LoRA adapters, `executor.ts`) in the page's model worker: the same executor as Node
 * (`executor.ts`: features, closed-form training, merge, M5's candidate), with
 * only the file I/O of the page — the base model's files read through the
 * worker's `FileSource` (the bundled folder over HTTP, a kept folder from
 * Cache Storage, a hub model from its cache), the merged folder handed to
 * `keep` (the page's model store) and loaded back on ONNX Runtime Web.
 */
import type { FailureCase, ImagePixels, Model } from "../../core/index.ts";
import { loadOrtModel } from "../../models/ort-model.ts";
import { webSessions } from "../../models/ort-session.browser.ts";
import { MissingFileError, type FileSource } from "../../models/session.ts";
import {
  headAdapterCandidate,
  TRAIN_HERE_MAX_PARAMETERS,
  type HeadAdapterCandidate,
  type HeadAdapterOptions,
  type L4Pool,
} from "./executor.ts";
import type { TrainStep } from "./lora-head.ts";
import { approxParameters } from "./recipe.ts";

/** Files a model folder may hold beside the spec's: read when present, so the merged folder is complete. */
const OPTIONAL_FILES = ["generation_config.json", "preprocessor_config.json", "processor_config.json"];

/**
 * `paths` of `files` as a folder (path → bytes); the optional ones are skipped when missing, any other missing
 * file throws naming it.
 *
 * @example await readFiles(fetchFiles("/models/tiny-vlm/"), ["config.json", "onnx/lm_head.onnx"]) // Map(2)
 */
export async function readFiles(files: FileSource, paths: readonly string[]): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  for (const path of new Set([...paths, ...OPTIONAL_FILES])) {
    try {
      out.set(path, await files(path));
    } catch (error) {
      if (error instanceof MissingFileError && !paths.includes(path)) continue;
      throw error;
    }
  }
  return out;
}

/** A folder held in memory as a `FileSource` (the merged model, loaded before or without the store). */
function memoryFiles(files: ReadonlyMap<string, Uint8Array>, where: string): FileSource {
  const read = async (path: string) => {
    const bytes = files.get(path);
    if (!bytes) throw new MissingFileError(path, where);
    return bytes;
  };
  return Object.assign(read, { list: async () => [...files.keys()] });
}

/** L4's progress in the page: the pool's features (one forward per case), then training (step, loss). */
export interface L4Progress {
  readonly phase: "features" | "training";
  readonly done: number;
  readonly total: number;
  /** The minibatch loss at the last step (training). */
  readonly loss?: number;
  /** (step, loss) so far (training). */
  readonly curve: readonly (readonly [number, number])[];
}

export interface PageL4Options {
  /** The loaded model's folder, as the worker reads it. */
  readonly files: FileSource;
  /** The folder's files to read and copy into the merged folder (the spec's and those the load read). */
  readonly paths: readonly string[];
  /** Keeps the merged folder in the page's model store under `name`; returns the stored name (`files:<name>`). */
  readonly keep: (name: string, files: ReadonlyMap<string, Uint8Array>) => Promise<string>;
  /** Suffix of the kept folder's name, so two runs never replace each other's weights (the run id). */
  readonly runId: string;
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: L4Progress) => void;
  readonly train?: HeadAdapterOptions["train"];
  /** What L4 trains (default `layer`: the last layer's attention projections). */
  readonly method?: HeadAdapterOptions["method"];
}

/** What the worker holds while an investigation runs: the executor M5 calls, and what it made. */
export interface PageL4 {
  readonly executor: (pool: L4Pool) => HeadAdapterCandidate;
  /** The stored names of the merged folders written so far. */
  readonly written: () => string[];
  readonly dispose: () => Promise<void>;
}

/**
 * The page's L4 executor for `model`, or why it is not trained here (too big, no hidden states or head file):
 * the same checks as the CLI, so the page and `evalrx investigate --max-tier L4` train the same models.
 *
 * @example
 * const l4 = pageL4Executor(model, { files, paths, keep, runId, images, signal, onProgress });
 * "executor" in l4 // true for tiny-vlm; M5 trains it when it reaches L4
 */
export function pageL4Executor(model: Model, o: PageL4Options): PageL4 | { readonly reason: string } {
  const params = approxParameters(model.spec);
  if (params > TRAIN_HERE_MAX_PARAMETERS)
    return {
      reason: `${model.spec.key} has ~${params.toExponential(2)} parameters, over the ${TRAIN_HERE_MAX_PARAMETERS.toExponential(0)} trained in the page: L4 writes the recipe only`,
    };
  const head = "onnx/lm_head.onnx";
  if (!model.capabilities.has("hidden_states"))
    return {
      reason: `${model.spec.key} gives no hidden states: the L4 adapters cannot be trained; L4 writes the recipe only`,
    };
  const made: HeadAdapterCandidate[] = [];
  const written: string[] = [];
  return {
    executor: (pool) => {
      let curve: [number, number][] = [];
      const candidate = headAdapterCandidate({
        ...pool,
        images: o.images,
        sessions: webSessions("wasm", { memo: false }),
        files: () => readFiles(o.files, [...new Set([...o.paths, head])]),
        materialize: async (files, name) => {
          const location = await o.keep(`${name}@${o.runId}`, files);
          written.push(location);
          const merged = await loadOrtModel(memoryFiles(files, location), webSessions("wasm", { memo: true }), {
            key: name,
            source: location,
          });
          return { model: merged, location };
        },
        onCase: (done, total) => {
          curve = [];
          o.onProgress?.({ phase: "features", done, total, curve });
        },
        onStep: (s: TrainStep) => {
          curve = [...curve, [s.step, Number(s.loss.toPrecision(5))]];
          o.onProgress?.({ phase: "training", done: s.step, total: s.steps, loss: s.loss, curve });
        },
        ...(o.train ? { train: o.train } : {}),
        ...(o.method ? { method: o.method } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      });
      made.push(candidate);
      return candidate;
    },
    written: () => [...written],
    dispose: async () => {
      await Promise.all(made.map((c) => c.dispose()));
    },
  };
}
