import { readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import * as ort from "onnxruntime-node";
import { MissingFileError, wrapOrtSession, type FileSource, type SessionFactory } from "./session.ts";

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
  return wrapOrtSession(session, (t) => new ort.Tensor(t.type, t.data as never, t.dims));
};

/**
 * Reads model files from a folder on disk, and lists them (so the layout is
 * found without reading a file). Paths that try to leave the folder are refused.
 *
 * @example
 * await nodeFiles("models/tiny-vlm")("config.json") // → Uint8Array(…)
 */
export function nodeFiles(folder: string): FileSource {
  const root = resolve(folder);
  const read = async (path: string) => {
    const file = resolve(join(root, path));
    if (!file.startsWith(root + "/")) throw new Error(`model file path '${path}' leaves the model folder`);
    try {
      return new Uint8Array(await readFile(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new MissingFileError(path, folder);
      throw error;
    }
  };
  const list = async () => {
    // A model folder is shallow (config files, onnx/); two levels is all transformers.js reads.
    const out: string[] = [];
    const walk = async (dir: string, depth: number) => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isFile()) out.push(relative(root, path));
        else if (entry.isDirectory() && depth < 2) await walk(path, depth + 1);
      }
    };
    await walk(root, 0);
    return out.sort();
  };
  return Object.assign(read, { list });
}
