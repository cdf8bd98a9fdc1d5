/**
 * A second model worker for an investigation: the same model, loaded from the
 * files the model worker reads for it, answering `generate` and `forward` on
 * its own thread, so an investigation's independent cases run on two cores
 * where ONNX Runtime Web's WASM runs one thread per session (see
 * `workers/model-pool.ts`, which spreads the calls). It holds no store and
 * no job: only the model.
 */
import { expose } from "comlink";
import type { CaptureOptions, GenerateOptions, ModelInput, ModelSpec, Trace } from "../src/core/model.ts";
import { configureOrtWasm } from "../src/models/ort-env.browser.ts";
import { loadOrtModel, type OrtModel } from "../src/models/ort-model.ts";
import { webSessions } from "../src/models/ort-session.browser.ts";
import { MissingFileError, type FileSource } from "../src/models/session.ts";

/** One model file as the model worker hands it over: its bytes, or the sentence saying it is not there. */
export type HelperFile = { readonly bytes: Uint8Array } | { readonly missing: string };

/** What the helper needs to load the model worker's model again, besides a way to read its files. */
export interface HelperLoad {
  /** The folder's file list, when its source lists one (a hub repository). */
  readonly list?: readonly string[];
  readonly spec: ModelSpec;
  readonly key: string;
  readonly source: string;
}

configureOrtWasm();
let model: OrtModel | undefined;
/**
 * Calls run one after another, in the order they came: the model worker sends the next ones ahead, so this worker
 * goes on to the next at once instead of waiting for the model worker to read an answer and send another.
 */
let queue: Promise<unknown> = Promise.resolve();
function inTurn<T>(call: () => Promise<T>): Promise<T> {
  const turn = queue.then(call);
  queue = turn.catch(() => undefined);
  return turn;
}

function loaded(): OrtModel {
  if (!model) throw new Error("the helper model worker has no model: load() it first");
  return model;
}

const api = {
  /** Loads the model on WASM with the memo (its repeated runs answered from memory, as the model worker's). */
  async load(
    /** Reads a file of the model's folder through the model worker (a comlink proxy). */
    readFile: (path: string) => Promise<HelperFile>,
    what: HelperLoad,
  ): Promise<void> {
    const read = async (path: string): Promise<Uint8Array> => {
      const file = await readFile(path);
      // An error thrown across the worker boundary arrives as a plain Error: a missing file is named instead.
      if ("missing" in file) throw new MissingFileError(path, file.missing);
      return file.bytes;
    };
    const list = what.list;
    const files: FileSource = list ? Object.assign(read, { list: async () => list }) : read;
    model = await loadOrtModel(files, webSessions("wasm", { memo: true }), {
      spec: what.spec,
      key: what.key,
      source: what.source,
    });
  },
  generate(input: ModelInput, options: GenerateOptions = {}): Promise<string> {
    return inTurn(() => loaded().generate(input, options));
  },
  forward(input: ModelInput, capture: CaptureOptions = {}): Promise<Trace> {
    return inTurn(() => loaded().forward(input, capture));
  },
  async dispose(): Promise<void> {
    await model?.dispose();
    model = undefined;
  },
};

export type ModelHelperApi = typeof api;

expose(api);
