import type { Progress } from "../../core/model.ts";
import type { ModelSource, ModelStatus, RuntimeStatus, WorkerLoadOptions } from "../../../workers/model.worker.ts";
import { errorText } from "./errors.ts";
import { ModelClient } from "../runtime.ts";
import type { Settings } from "./settings.svelte.ts";

/**
 * A model source as a short, storable name: `bundled:tiny-vlm`, `hub:owner/name`,
 * `url:<address>`, `files:<folder name>`. Runs record it, so a resumed run
 * asks for the same model.
 *
 * @example sourceName({ kind: "hub", id: "Xenova/tiny-random-LlamaForCausalLM" }) // "hub:Xenova/tiny-random-LlamaForCausalLM"
 */
export function sourceName(source: ModelSource): string {
  switch (source.kind) {
    case "bundled":
      return `bundled:${source.key}`;
    case "hub":
      return `hub:${source.id}`;
    case "url":
      return `url:${source.url}`;
    case "files":
      return `files:${source.key}`;
  }
}

/**
 * The page's one model worker, seen as state: the engine it runs on, the
 * model loaded in it, load progress, and its death. Loads are "newest wins":
 * asking for another model while one loads supersedes the first (its result
 * is dropped, never shown).
 */
export class ModelService {
  runtime = $state.raw<RuntimeStatus | undefined>();
  runtimeFailure = $state<string | undefined>();
  /** The loaded model, or undefined. */
  status = $state.raw<ModelStatus | undefined>();
  /** Where the loaded model came from (to load it again, e.g. to resume a run). */
  loadedSource = $state.raw<ModelSource | undefined>();
  /** What is loading now, with its progress. */
  loading = $state.raw<{ readonly name: string; readonly progress?: Progress } | undefined>();
  failure = $state<string | undefined>();
  /** Why the worker died, until it is restarted. */
  died = $state<string | undefined>();
  readonly client: ModelClient;
  readonly #settings: Settings;
  #loadToken = 0;
  #loaded: string | undefined;

  constructor(settings: Settings, client: ModelClient = new ModelClient()) {
    this.#settings = settings;
    this.client = client;
    client.onDeath((reason) => {
      this.died = reason;
      this.status = undefined;
      this.#loaded = undefined;
      this.loading = undefined;
    });
    this.checkRuntime();
  }

  /** Asks the worker which engine it will use (and proves ONNX Runtime's WASM build runs). */
  checkRuntime(): void {
    this.client
      .call((api) => api.status())
      .then(
        (s) => {
          this.runtime = s;
          this.runtimeFailure = undefined;
        },
        (error: unknown) => (this.runtimeFailure = errorText(error)),
      );
  }

  /** The device the settings ask for, as the worker's load option. */
  get device(): NonNullable<WorkerLoadOptions["device"]> {
    return this.#settings.device;
  }

  /** Loads `source` (replacing the loaded model); rejects with the reason, and a newer load supersedes it. */
  async load(source: ModelSource, options: Omit<WorkerLoadOptions, "device"> = {}): Promise<ModelStatus> {
    const token = ++this.#loadToken;
    const name = sourceName(source);
    this.loading = { name };
    this.failure = undefined;
    try {
      const status = await this.client.load(source, { ...options, device: this.device }, (progress) => {
        if (token === this.#loadToken) this.loading = { name, progress };
      });
      if (token !== this.#loadToken) throw new Error(`loading ${name} was superseded by a newer load`);
      this.status = status;
      this.loadedSource = source;
      this.#loaded = name + (options.backend ? `#${options.backend}` : "");
      return status;
    } catch (error) {
      if (token === this.#loadToken) {
        this.failure = `${name}: ${errorText(error)}`;
        this.status = undefined;
        this.#loaded = undefined;
      }
      throw error;
    } finally {
      if (token === this.#loadToken) this.loading = undefined;
    }
  }

  /** The loaded model's status when it is `source` already; else loads it. */
  async ensure(source: ModelSource, options: Omit<WorkerLoadOptions, "device"> = {}): Promise<ModelStatus> {
    const wanted = sourceName(source) + (options.backend ? `#${options.backend}` : "");
    if (this.status && this.#loaded === wanted && !this.died) return this.status;
    return this.load(source, options);
  }

  /** Starts a fresh worker (after a death, or to free memory); nothing is loaded in it. */
  restart(): void {
    this.#loadToken++;
    this.client.restart();
    this.died = undefined;
    this.status = undefined;
    this.#loaded = undefined;
    this.loading = undefined;
    this.checkRuntime();
  }

  dispose(): void {
    this.client.terminate("the page closed");
  }
}
