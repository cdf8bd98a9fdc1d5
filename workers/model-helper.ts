/**
 * Starts a helper model worker (`model-helper.worker.ts`) with the model
 * worker's model and hands it back as a `Model`, for `modelPool` to give
 * calls to. Its files are read by the model worker (the source it loaded
 * from: the app, a dropped folder, the hub cache) and passed over one by one.
 */
import { proxy, wrap, type Remote } from "comlink";
import type { CaptureOptions, GenerateOptions, Model, ModelInput, ModelSpec } from "../src/core/model.ts";
import { MissingFileError, type FileSource } from "../src/models/session.ts";
import type { HelperFile, ModelHelperApi } from "./model-helper.worker.ts";

/** A started helper: its copy of the model, and how to stop it. */
export interface ModelHelper {
  readonly model: Model;
  close(): Promise<void>;
}

/** Options an answer does not depend on and that cannot cross to another worker (an AbortSignal). */
function withoutSignal<T extends { readonly signal?: AbortSignal }>(options: T | undefined): Omit<T, "signal"> {
  if (!options) return {} as Omit<T, "signal">;
  const { signal: _signal, ...rest } = options;
  return rest;
}

/**
 * Starts a helper worker and loads the model there from `files` (the same folder as the model worker's model,
 * with its `spec`). `onDeath` is called when the helper's worker fails, before its waiting calls are rejected, so
 * the pool can take it out first and answer them elsewhere.
 *
 * @example
 * const helper = await startModelHelper({ files, spec: model.spec, key: "tiny-vlm", source: where }, () => pool.remove(helper.model));
 * pool.add(helper.model);
 */
export async function startModelHelper(
  what: { readonly files: FileSource; readonly spec: ModelSpec; readonly key: string; readonly source: string },
  onDeath: (reason: string) => void,
): Promise<ModelHelper> {
  const worker = new Worker(new URL("./model-helper.worker.ts", import.meta.url), { type: "module" });
  const remote: Remote<ModelHelperApi> = wrap<ModelHelperApi>(worker);
  let died: (reason: Error) => void = () => undefined;
  const death = new Promise<never>((_, reject) => (died = reject));
  death.catch(() => undefined);
  const fail = (reason: string) => {
    onDeath(reason);
    died(new Error(`the helper model worker stopped: ${reason}`));
  };
  worker.addEventListener("error", (e) => fail(e.message || "an error in the worker"));
  worker.addEventListener("messageerror", () => fail("a message could not be read"));
  const guarded = <T>(p: Promise<T>) => Promise.race([p, death]);
  const read = async (path: string): Promise<HelperFile> => {
    try {
      return { bytes: await what.files(path) };
    } catch (error) {
      if (error instanceof MissingFileError) return { missing: what.source };
      throw error;
    }
  };
  try {
    await guarded(
      // A proxy crosses only as an argument of its own, never inside an object.
      remote.load(proxy(read), {
        ...(what.files.list ? { list: await what.files.list() } : {}),
        spec: what.spec,
        key: what.key,
        source: what.source,
      }),
    );
  } catch (error) {
    worker.terminate();
    throw error;
  }
  const model: Model = {
    spec: what.spec,
    capabilities: what.spec.capabilities,
    generate: (input: ModelInput, options?: GenerateOptions) => guarded(remote.generate(input, withoutSignal(options))),
    forward: (input: ModelInput, capture?: CaptureOptions) => guarded(remote.forward(input, withoutSignal(capture))),
    dispose: async () => {},
  };
  return {
    model,
    async close() {
      await Promise.race([remote.dispose(), death, new Promise((done) => setTimeout(done, 1000))]).catch(
        () => undefined,
      );
      worker.terminate();
    },
  };
}
