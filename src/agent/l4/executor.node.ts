/**
 * The L4 head adapter under Node: the base model's folder read from disk, the
 * merged folder written under `out` (an ordinary model folder: `loadModel`,
 * `--model <folder>` and the page's folder drop all load it), sessions from
 * onnxruntime-node.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { nodeSessions } from "../../models/ort-session.node.ts";
import { headAdapterCandidate, type HeadAdapterCandidate, type HeadAdapterOptions } from "./executor.ts";

/** Every file under `folder`, by its path inside it (`onnx/lm_head.onnx`). */
export function readFolder(folder: string): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(folder, path).split("\\").join("/"), new Uint8Array(readFileSync(path)));
    }
  };
  walk(folder);
  return files;
}

/** Writes `files` as a folder at `dir` (created; files there of the same name are replaced). */
export function writeFolder(dir: string, files: ReadonlyMap<string, Uint8Array>): void {
  for (const [path, bytes] of files) {
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, bytes);
  }
}

/**
 * The head-adapter candidate for the model in `folder` (a bundled model's `spec.source` resolves from the repo
 * root), writing the merged model to `<out>/<name>/`.
 *
 * @example
 * const l4 = nodeHeadAdapter({ folder: "models/planted-vlm", out: ".evalrx/investigate/l4", cases, sealed, images });
 */
export function nodeHeadAdapter(
  o: Omit<HeadAdapterOptions, "files" | "materialize" | "sessions"> & { readonly folder: string; readonly out: string },
): HeadAdapterCandidate {
  const folder = resolve(REPO_ROOT, o.folder);
  return headAdapterCandidate({
    ...o,
    sessions: nodeSessions,
    files: async () => readFolder(folder),
    materialize: async (files, name) => {
      const dir = join(resolve(o.out), name);
      writeFolder(dir, files);
      return { model: await loadModel(dir), location: dir };
    },
  });
}
