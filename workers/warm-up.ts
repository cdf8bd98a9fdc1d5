import type { ImagePixels, ModelInput, ModelSpec } from "../src/core/model.ts";

/** What a warm-up needs of a model: its modalities, and generation that leaves the sessions' memos alone. */
export interface Warmable {
  readonly spec: Pick<ModelSpec, "modalities">;
  generate(
    input: ModelInput,
    options: { maxNewTokens: number; temperature: number; memo: false; signal: AbortSignal },
  ): Promise<unknown>;
}

/** What a warm-up did: how many made-up calls it ran, for how long, and why it stopped. */
export interface WarmUpReport {
  readonly calls: number;
  readonly ms: number;
  readonly stopped: "asked" | "budget" | "failed";
}

/** A warm-up under way: `stop()` cancels the call in flight (if any) and resolves once it has returned. */
export interface WarmUp {
  stop(): Promise<WarmUpReport>;
  readonly done: Promise<WarmUpReport>;
}

export interface WarmUpOptions {
  /** Time it may run, in ms of wall clock; default 1500. */
  readonly budgetMs?: number;
  /** A clock in ms (tests pass their own); default `performance.now`. */
  readonly now?: () => number;
  /** Waits between two calls, so anything queued on the thread runs first; default a macrotask. */
  readonly pause?: () => Promise<void>;
}

/**
 * The `i`-th made-up input of a warm-up: a short question and, for a model that reads images, a small image.
 * Each one differs from the others (a pixel and a word): the engine is to run as it will on a dataset's cases,
 * not the same call again.
 *
 * @example warmUpInput(2, true) // → { prompt: "<image> is there a thing 2 ?", image: { width: 32, … } }
 */
export function warmUpInput(i: number, withImage: boolean): ModelInput {
  if (!withImage) return { prompt: `is there a thing ${i} ?` };
  // Where the image goes: the page's white-box runtime puts its features at the prompt's <image> token.
  const prompt = `<image> is there a thing ${i} ?`;
  const width = 32;
  const height = 32;
  const data = new Uint8ClampedArray(width * height * 4);
  for (let p = 0; p < width * height; p++) {
    // A smooth gradient, not noise: nothing here is meant to be read, only run.
    data[p * 4] = (p * 7) & 255;
    data[p * 4 + 1] = (p * 3 + i) & 255;
    data[p * 4 + 2] = (p >> 3) & 255;
    data[p * 4 + 3] = 255;
  }
  data[0] = i & 255;
  const image: ImagePixels = { width, height, data };
  return { prompt, image };
}

/**
 * Runs a just-loaded model on made-up inputs until something real asks for it
 * (`stop()`) or `budgetMs` has passed, so that the user's first eval does not
 * pay for the engine's first runs. In the page those are slow: the browser
 * compiles ONNX Runtime's WebAssembly lazily and optimises a function only
 * once it has run a while, and the first 100 decoder runs of a 600-case eval
 * took 243 ms against 70–90 ms for each later 100. A user loads a model and
 * then fills in the eval's form: that pause is what this uses. It never
 * holds a job up for more than one step of one call: `stop()` cancels the
 * call in flight (it ends at its next step) and then the job has the model to
 * itself.
 *
 * @example
 * const warm = warmUp(model); // after load
 * await warm.stop();          // before the first real call
 */
export function warmUp(model: Warmable, options: WarmUpOptions = {}): WarmUp {
  const budgetMs = options.budgetMs ?? 1500;
  if (!(budgetMs >= 0)) throw new RangeError(`warmUp(): budgetMs must be ≥ 0 ms, got ${budgetMs}`);
  const now = options.now ?? (() => performance.now());
  const pause = options.pause ?? (() => new Promise<void>((resolve) => setTimeout(resolve, 0)));
  const withImage = model.spec.modalities.has("image");
  const asked = new AbortController();
  const started = now();
  const done = (async (): Promise<WarmUpReport> => {
    let calls = 0;
    const report = (stopped: WarmUpReport["stopped"]) => ({ calls, ms: now() - started, stopped });
    for (;;) {
      await pause();
      if (asked.signal.aborted) return report("asked");
      if (now() - started >= budgetMs) return report("budget");
      try {
        // Not memoised: made-up inputs must neither fill a session's memo nor count against its hit rate.
        await model.generate(warmUpInput(calls, withImage), {
          maxNewTokens: 3,
          temperature: 0,
          memo: false,
          signal: asked.signal,
        });
      } catch {
        if (asked.signal.aborted) return report("asked");
        // A model that cannot answer a made-up input will say why on the user's own: nothing to warm.
        return report("failed");
      }
      calls++;
    }
  })();
  return {
    stop() {
      asked.abort();
      return done;
    },
    done,
  };
}
