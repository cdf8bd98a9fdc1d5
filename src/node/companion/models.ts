import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { lstat, readdir, realpath } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { Model } from "../../core/index.ts";
import type { Fingerprint } from "../../evals/fingerprint.ts";
import { getSpec, listSpecs } from "../../models/specs/index.ts";
import { imageRefPath } from "../../datasets/images.ts";
import { RefusedFileError } from "../confined.ts";

/** A model a job named, resolved: a bundled key, or a folder confined to the companion's `--models`. */
export interface ResolvedModel {
  /** What `loadModel` takes: the bundled key, or the folder's real path. */
  readonly ref: string;
  /** The folder the files are read from. */
  readonly folder: string;
}

/** The most files a model folder may hold for the confinement check (a model is a handful). */
const MAX_MODEL_FILES = 2000;

/**
 * Where does the model a job names live, and may the companion read it? A
 * bundled model's key (`tiny-vlm`) is always allowed; anything else is a
 * folder relative to `modelsRoot` (the `--models` folder named at start),
 * refused when there is no such root, when the path leaves it (`..`, an
 * absolute path), or when the folder or any file in it is a symbolic link
 * that leads out of it.
 *
 * @example await resolveModel("tiny-vlm", undefined) // { ref: "tiny-vlm", folder: ".../models/tiny-vlm" }
 */
export async function resolveModel(name: string, modelsRoot: string | undefined): Promise<ResolvedModel> {
  const spec = getSpec(name);
  if (spec) {
    const { REPO_ROOT } = await import("../../models/load.node.ts");
    return { ref: name, folder: resolve(REPO_ROOT, spec.source) };
  }
  const bundled = listSpecs().map((s) => `'${s.key}'`);
  if (modelsRoot === undefined)
    throw new RefusedFileError(
      `model '${name}' is not a bundled model (${bundled.join(", ")}) and the companion was started without --models DIR, so it reads no model folder`,
    );
  const path = imageRefPath(name);
  if ("reason" in path) throw new RefusedFileError(`model '${name}': ${path.reason.replace(/image/g, "model path")}`);
  const base = await realpath(modelsRoot);
  let real: string;
  try {
    real = await realpath(join(base, ...path.segments));
  } catch {
    throw new RefusedFileError(
      `model '${name}' is neither a bundled model (${bundled.join(", ")}) nor a folder under --models`,
    );
  }
  const inside = (p: string) => p === base || p.startsWith(base + sep);
  if (!inside(real)) throw new RefusedFileError(`model '${name}' is a link that leads out of the --models folder`);
  let count = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir)) {
      if (++count > MAX_MODEL_FILES)
        throw new RefusedFileError(`model '${name}' holds over ${MAX_MODEL_FILES} files; name the model's own folder`);
      const full = join(dir, entry);
      const target = await realpath(full);
      if (!inside(target))
        throw new RefusedFileError(`model '${name}': '${entry}' is a link that leads out of the --models folder`);
      if ((await lstat(target)).isDirectory()) await walk(target);
    }
  };
  if (!(await lstat(real)).isDirectory()) throw new RefusedFileError(`model '${name}' is not a folder`);
  await walk(real);
  return { ref: real, folder: real };
}

/**
 * The model's identity in a run's fingerprint, as the CLI and the page write
 * it: its key and the first 12 hex of sha256 of each of its spec's files.
 *
 * @example modelIdentity(model, folder) // { key: "tiny-vlm", files: { "onnx/model.onnx": "3f2a…" } }
 */
export function modelIdentity(model: Model, folder: string): Fingerprint["model"] {
  const files: Record<string, string> = {};
  for (const f of model.spec.files) {
    try {
      files[f] = createHash("sha256")
        .update(readFileSync(resolve(folder, f)))
        .digest("hex")
        .slice(0, 12);
    } catch {
      // A file the spec lists but the folder lacks is not part of what ran.
    }
  }
  return { key: model.spec.key, ...(Object.keys(files).length ? { files } : {}) };
}

/** A loaded model and its identity. */
export interface LoadedModel {
  readonly model: Model;
  readonly identity: Fingerprint["model"];
}

/**
 * Loaded models by folder, so a second job on the same model does not load it
 * again; at most `max` stay loaded (the oldest is disposed first).
 */
export class ModelCache {
  readonly #loaded = new Map<string, Promise<LoadedModel>>();
  readonly #max: number;

  constructor(max = 2) {
    this.#max = max;
  }

  /** Whether the model is loaded (or loading) already. */
  has(resolved: ResolvedModel, options: { memo?: boolean } = {}): boolean {
    return this.#loaded.has(options.memo ? `${resolved.folder}#memo` : resolved.folder);
  }

  /**
   * The model, loaded once. `memo` loads a copy whose sessions answer a
   * forward that repeats an earlier one from memory (an investigation's
   * stages read each case's vision encoding and answer several times).
   */
  get(resolved: ResolvedModel, options: { memo?: boolean } = {}): Promise<LoadedModel> {
    const key = options.memo ? `${resolved.folder}#memo` : resolved.folder;
    let entry = this.#loaded.get(key);
    if (entry) {
      this.#loaded.delete(key);
      this.#loaded.set(key, entry);
      return entry;
    }
    entry = (async () => {
      const { loadModel } = await import("../../models/load.node.ts");
      const model = await loadModel(resolved.ref, options.memo ? { memo: true } : {});
      return { model, identity: modelIdentity(model, resolved.folder) };
    })();
    entry.catch(() => this.#loaded.delete(key));
    this.#loaded.set(key, entry);
    while (this.#loaded.size > this.#max) {
      const [oldest, loading] = this.#loaded.entries().next().value!;
      this.#loaded.delete(oldest);
      void loading.then((m) => m.model.dispose()).catch(() => undefined);
    }
    return entry;
  }

  async dispose(): Promise<void> {
    const all = [...this.#loaded.values()];
    this.#loaded.clear();
    await Promise.all(all.map((p) => p.then((m) => m.model.dispose()).catch(() => undefined)));
  }
}
