/**
 * The loaded model's second copy, shared by every job on it: a helper model
 * worker (`model-helper.ts`) started at the first job that asks, kept while
 * the model stays loaded, and closed with it. Starting one costs 0.6–0.9 s
 * of CPU (the model's files read again and a second session made), as much
 * as a 600-trial eval gains from it, so a copy per job would eat the gain;
 * kept, only the first job pays. `pooled` gives a job the model to call: the
 * model worker's own copy with the helper's beside it (`modelPool`).
 */
import type { Model } from "../src/core/model.ts";
import type { ModelHelper } from "./model-helper.ts";
import { modelPool, type ModelPool } from "./model-pool.ts";

/** Starts a copy of the loaded model in another worker; `onDeath` is told if that worker fails. */
export type StartCopy = (onDeath: (reason: string) => void) => Promise<ModelHelper>;

/** The helper as a job finds it: running, or why there is none. */
type Helper = { readonly helper: ModelHelper } | { readonly why: string };

/**
 * The loaded model's helper copy, started once and shared: `get` starts it the first time and hands the same one
 * to every later job; a helper that died is started again by the next job that asks, one that could not start is
 * not tried again for this model (it would fail the same way, at the same cost).
 *
 * @example
 * const copies = new SharedCopy((onDeath) => startModelHelper(what, onDeath)); // at model load, nothing started yet
 * const { helper } = await copies.get(); // the first job starts it; the next ones get the same helper
 * await copies.close(); // the model is unloaded
 */
export class SharedCopy {
  readonly #start: StartCopy;
  #current: Promise<Helper> | undefined;
  #closed = false;
  readonly #deaths = new Set<(reason: string) => void>();

  constructor(start: StartCopy) {
    this.#start = start;
  }

  /** The running helper, started at the first call; `why` says why there is none. */
  get(): Promise<Helper> {
    if (this.#closed) return Promise.resolve({ why: "the model was unloaded" });
    if (this.#current) return this.#current;
    const started = this.#start((reason) => {
      // The next job starts a new one; the jobs using this one take it out of their pools at once.
      if (this.#current === started) this.#current = undefined;
      for (const told of this.#deaths) told(reason);
    }).then(
      (helper): Helper => {
        if (this.#closed) void helper.close(); // unloaded while it started
        return this.#closed ? { why: "the model was unloaded" } : { helper };
      },
      (error: unknown): Helper => ({ why: error instanceof Error ? error.message : String(error) }),
    );
    this.#current = started;
    return started;
  }

  /** Calls `told` when the helper's worker dies, until the returned function is called. */
  onDeath(told: (reason: string) => void): () => void {
    this.#deaths.add(told);
    return () => this.#deaths.delete(told);
  }

  /** Stops the helper (the model is unloaded or replaced); later `get`s start none. */
  async close(): Promise<void> {
    this.#closed = true;
    const current = this.#current;
    this.#current = undefined;
    const found = await current;
    if (found && "helper" in found) await found.helper.close();
  }
}

/** The model a job calls, how many calls it keeps in flight, and what it says about its copies. */
export interface Pooled {
  readonly model: Model;
  readonly concurrency: number;
  /** Calls answered per copy so far, the model worker's own first (`ModelPool.answered`). */
  readonly answered: () => readonly number[];
  /** Ends the job's use of the copies (the shared helper stays for the next job). */
  close(): void;
}

/**
 * The model a job runs on: the model worker's own copy, with the shared helper's beside it, and `callsPerCopy`
 * calls in flight per copy. With `wait`, the helper is running (or known absent) before the first call, so each
 * input meets one copy from the start (an investigation asks for the same inputs again and again, and a copy
 * joining later finds the inputs tied to it cold in its memory); without, the model worker's copy starts at once
 * and the helper joins when it is ready (an eval asks for each input once per repeat). A helper that cannot start
 * or dies leaves the model worker's copy answering alone, and `warn` says so: the job goes on, only slower.
 *
 * @example
 * const copies = await pooled(model, shared, { callsPerCopy: 2, wait: false, warn: console.warn });
 * await runEval({ model: copies.model, concurrency: copies.concurrency, … });
 * copies.close();
 */
export async function pooled(
  model: Model,
  shared: SharedCopy | undefined,
  options: {
    readonly callsPerCopy: number;
    readonly wait: boolean;
    readonly warn: (message: string) => void;
    /** What ties an input to a copy (`modelPool`'s `keyOf`). */
    readonly keyOf?: Parameters<typeof modelPool>[1];
  },
): Promise<Pooled> {
  if (!shared) return { model, concurrency: 1, answered: () => [], close: () => undefined };
  const pool: ModelPool = modelPool(model, options.keyOf);
  let copy: Model | undefined;
  let closed = false;
  const stopWatching = shared.onDeath((reason) => {
    if (closed || !copy) return;
    // Taken out at once, before the helper's waiting calls fail: the pool answers them on the model worker's copy.
    pool.remove(copy);
    copy = undefined;
    options.warn(`the helper model worker stopped (${reason}); the model worker answers alone, more slowly`);
  });
  const join = (found: Helper): boolean => {
    if (closed) return false;
    if ("why" in found) {
      options.warn(`no helper model worker (${found.why}); the model worker answers alone, more slowly`);
      return false;
    }
    pool.add((copy = found.helper.model));
    return true;
  };
  const helper = shared.get();
  const joined = options.wait ? join(await helper) : (void helper.then(join), true);
  return {
    model: pool.model,
    concurrency: joined ? 2 * options.callsPerCopy : 1,
    answered: pool.answered,
    close() {
      closed = true;
      stopWatching();
    },
  };
}
