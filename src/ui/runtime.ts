import { proxy, wrap, type Remote } from "comlink";
import type {
  LoadProgress,
  ModelSource,
  ModelStatus,
  ModelWorkerApi,
  WorkerLoadOptions,
} from "../../workers/model.worker.ts";

function newModelWorker(): Worker {
  return new Worker(new URL("../../workers/model.worker.ts", import.meta.url), { type: "module" });
}

/** Starts the model worker; the page talks to it through this one comlink proxy. */
export function startModelWorker(): { api: Remote<ModelWorkerApi>; worker: Worker } {
  const worker = newModelWorker();
  return { api: wrap<ModelWorkerApi>(worker), worker };
}

/** Thrown for calls to a model worker that died (crashed, ran out of memory, or was stopped). */
export class WorkerDiedError extends Error {
  override readonly name = "WorkerDiedError";
}

/**
 * One model in one worker, seen from the page. Every call races the worker's
 * death: if the worker crashes (e.g. out of memory) pending and later calls
 * reject with the reason instead of hanging, and `restart()` starts a fresh one.
 *
 * @example
 * const client = startModelClient();
 * await client.load({ kind: "bundled", key: "tiny-vlm" }, {}, (p) => console.log(p.stage));
 * const { text } = await client.call((api) => api.generate({ prompt, image }));
 */
export class ModelClient {
  api!: Remote<ModelWorkerApi>;
  worker!: Worker;
  /** Why the current worker died, once it has. */
  deathReason: string | undefined;
  private died!: Promise<never>;
  private readonly listeners = new Set<(reason: string) => void>();

  constructor(private readonly makeWorker: () => Worker = newModelWorker) {
    this.start();
  }

  private start(): void {
    this.deathReason = undefined;
    const worker = this.makeWorker();
    this.worker = worker;
    this.api = wrap<ModelWorkerApi>(worker);
    this.died = new Promise<never>((_, reject) => {
      const die = (reason: string) => {
        if (this.worker !== worker || this.deathReason) return;
        this.deathReason = reason;
        reject(
          new WorkerDiedError(`the model worker died: ${reason}. Start a new one (restart) and load the model again.`),
        );
        for (const listener of this.listeners) listener(reason);
      };
      worker.addEventListener("error", (event) => {
        event.preventDefault();
        die(event.message || "an uncaught error (possibly out of memory)");
      });
      worker.addEventListener("messageerror", () => die("a message could not be read"));
      this.stopped = (reason) => die(reason);
    });
    this.died.catch(() => undefined);
  }

  private stopped: (reason: string) => void = () => undefined;

  /** Calls the worker; rejects with `WorkerDiedError` if it dies first. */
  async call<T>(fn: (api: Remote<ModelWorkerApi>) => Promise<T>): Promise<T> {
    if (this.deathReason) throw new WorkerDiedError(`the model worker died: ${this.deathReason}. Call restart().`);
    return Promise.race([fn(this.api), this.died]);
  }

  /** Loads a model, reporting progress. */
  load(
    source: ModelSource,
    options: WorkerLoadOptions = {},
    onProgress?: (p: LoadProgress) => void,
  ): Promise<ModelStatus> {
    return this.call((api) => api.load(source, options, onProgress ? proxy(onProgress) : undefined));
  }

  /** Tells `listener` when the worker dies (with the reason). */
  onDeath(listener: (reason: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops the worker; pending calls reject. */
  terminate(reason = "it was stopped"): void {
    this.worker.terminate();
    this.stopped(reason);
  }

  /** Stops the current worker (if alive) and starts a fresh one with no model loaded. */
  restart(): void {
    if (!this.deathReason) this.terminate("it was restarted");
    this.start();
  }
}

/** Starts a model worker wrapped in a `ModelClient`. */
export function startModelClient(): ModelClient {
  return new ModelClient();
}
