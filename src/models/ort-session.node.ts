import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import * as ort from "onnxruntime-node";
import { MissingFileError, type FileSource, type PlainTensor, type Session, type SessionFactory } from "./session.ts";

/** Converts between the core's plain tensors and one ONNX Runtime build's `Tensor` class. */
export function tensorAdapter(T: typeof ort.Tensor) {
  return {
    toOrt: (t: PlainTensor) => new T(t.type, t.data as never, t.dims),
    fromOrt: (t: ort.Tensor): PlainTensor => ({
      type: t.type as PlainTensor["type"],
      data: t.data as PlainTensor["data"],
      dims: t.dims,
    }),
  };
}

/** Wraps an ONNX Runtime session (node or web) as the core's `Session`. */
export function wrapSession(session: ort.InferenceSession, T: typeof ort.Tensor): Session {
  const { toOrt, fromOrt } = tensorAdapter(T);
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds, fetches) {
      const ortFeeds: Record<string, ort.Tensor> = {};
      for (const [name, t] of Object.entries(feeds)) if (session.inputNames.includes(name)) ortFeeds[name] = toOrt(t);
      const out = fetches ? await session.run(ortFeeds, [...fetches]) : await session.run(ortFeeds);
      const result: Record<string, PlainTensor> = {};
      for (const [name, t] of Object.entries(out)) result[name] = fromOrt(t);
      return result;
    },
    release: () => session.release(),
  };
}

/**
 * Sessions on onnxruntime-node (CPU). Graph optimisation stays at ONNX
 * Runtime's default; tapped softmax outputs are graph outputs, so no fusion
 * can remove them.
 *
 * @example
 * const session = await nodeSessions(bytes, { name: "onnx/model.onnx" });
 */
export const nodeSessions: SessionFactory = async (bytes) => {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["cpu"], intraOpNumThreads: 1 });
  return wrapSession(session, ort.Tensor);
};

/**
 * Reads model files from a folder on disk. Paths that try to leave the
 * folder are refused.
 *
 * @example
 * await nodeFiles("models/tiny-vlm")("config.json") // → Uint8Array(…)
 */
export function nodeFiles(folder: string): FileSource {
  const root = resolve(folder);
  return async (path) => {
    const file = resolve(join(root, path));
    if (!file.startsWith(root + "/")) throw new Error(`model file path '${path}' leaves the model folder`);
    try {
      return new Uint8Array(await readFile(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new MissingFileError(path, folder);
      throw error;
    }
  };
}
