import type { Progress } from "../../core/model.ts";
import type { BackendChoice, EngineCheck } from "../../models/backend-choice.ts";
import type {
  CachedHubModel,
  FileProgress,
  LoadProgress,
  ModelInspection,
  ModelSource,
  ModelStatus,
  RuntimeStatus,
  WorkerLoadOptions,
} from "../../../workers/model.worker.ts";
import { listSpecs } from "../../models/specs/index.ts";
import { errorText } from "./errors.ts";
import { ModelFolders, type StoredFolder } from "./model-folders.ts";
import {
  ENGINE_CHECKS_KEY,
  readEngineChecks,
  readSummaries,
  rememberEngineCheck,
  summarize,
  SUMMARIES_KEY,
  type ModelSummary,
} from "./model-summary.ts";
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

/** What the service passes on to the worker's `load` (the device and hub address come from Settings). */
export type ModelLoadOptions = Omit<WorkerLoadOptions, "device" | "hub">;

/** What is loading: its name, the latest stage, and each file's bytes (hub downloads: one bar per file). */
export interface LoadingState {
  readonly name: string;
  readonly progress?: Progress;
  readonly files: readonly FileProgress[];
}

type StorageLike = Pick<Storage, "getItem" | "setItem">;

/**
 * The page's one model worker, seen as state: the engine it runs on (the
 * startup check's measured choice, or the one Settings insists on), the model
 * loaded in it, load progress per file, and its death. Loads are "newest
 * wins": asking for another model while one loads supersedes the first (its
 * result is dropped, never shown). It also keeps the user's model folders and
 * lists the hub models this browser has kept.
 *
 * Nothing starts until it is first needed (`start()`, or any call that talks
 * to the worker): a page that runs no model — a share link, a stored report
 * or run — never starts the worker, never fetches the wasm runtime and never
 * runs the engine check.
 */
export class ModelService {
  #worker = $state.raw<RuntimeStatus | undefined>();
  /**
   * The engine status: ONNX Runtime's self-test, the engine check, and
   * `choice` — the engine loads run on (the measured one under "auto", else
   * the one chosen in Settings).
   */
  readonly runtime = $derived.by((): RuntimeStatus | undefined => {
    const worker = this.#worker;
    return worker && { ...worker, choice: this.#effective(worker) };
  });
  runtimeFailure = $state<string | undefined>();
  /** True while the engine check runs (at the first visit, or "Measure again"). */
  measuring = $state(false);
  /** Why the engine check failed, if it did ("auto" then stays on WASM). */
  checkFailure = $state<string | undefined>();
  /** The loaded model, or undefined. */
  status = $state.raw<ModelStatus | undefined>();
  /** Where the loaded model came from (to load it again, e.g. to resume a run). */
  loadedSource = $state.raw<ModelSource | undefined>();
  /** `sourceName` of the loaded model (with `#transformers` when loaded through transformers.js). */
  loadedName = $state<string | undefined>();

  /** What a form offers to run: the bundled models, and the loaded model when it is another one. */
  get offered(): readonly { readonly value: string; readonly label: string; readonly source: ModelSource }[] {
    const options = listSpecs().map((s) => ({
      value: `bundled:${s.key}`,
      label: `${s.key} (bundled)`,
      source: { kind: "bundled", key: s.key } as ModelSource,
    }));
    const loaded = this.status;
    const source = this.loadedSource;
    if (loaded && source && !options.some((o) => o.value === sourceName(source)))
      options.push({ value: sourceName(source), label: `${loaded.key} (loaded)`, source });
    return options;
  }
  /** What is loading now, with its progress. */
  loading = $state.raw<LoadingState | undefined>();
  failure = $state<string | undefined>();
  /** Why the worker died, until it is restarted. */
  died = $state<string | undefined>();
  /** The model folders kept in this browser. */
  folders = $state.raw<readonly StoredFolder[]>([]);
  foldersFailure = $state<string | undefined>();
  /** The hub models whose files this browser keeps (for the hub address in Settings). */
  hubModels = $state.raw<readonly CachedHubModel[]>([]);
  /** What was learnt of each model when it was last loaded, by `sourceName`. */
  summaries = $state.raw<Readonly<Record<string, ModelSummary>>>({});
  /** Inspections made in this visit (spec, files, capabilities, attention status — no session), by `sourceName`. */
  inspections = $state.raw<Readonly<Record<string, ModelInspection>>>({});
  /** True once the worker was started (the first page that needs a model, or the first call to it). */
  started = $state(false);
  #client: ModelClient | undefined;
  readonly #makeClient: () => ModelClient;
  readonly #settings: Settings;
  readonly #storage: StorageLike | undefined;
  readonly #folders: ModelFolders;
  #loadToken = 0;
  #loaded: string | undefined;
  #loadedOptions: ModelLoadOptions = {};
  #pendingFiles = new Map<string, FileProgress>();
  #frame: number | undefined;

  /** `client`: a started worker's client, or how to start one (by default the app's model worker, when first needed). */
  constructor(
    settings: Settings,
    client: ModelClient | (() => ModelClient) = () => new ModelClient(),
    storage: StorageLike | undefined = globalThis.localStorage,
    folders: ModelFolders = new ModelFolders(),
  ) {
    this.#settings = settings;
    this.#storage = storage;
    this.#folders = folders;
    this.#makeClient = typeof client === "function" ? client : () => client;
    this.summaries = readSummaries(storage?.getItem(SUMMARIES_KEY) ?? null);
  }

  /** The model worker's client; the first use starts the worker (see `start`). */
  get client(): ModelClient {
    this.start();
    return this.#client!;
  }

  /**
   * Starts the model worker once: its WASM self-test, the engine check (or the one remembered), the kept
   * folders and hub models listed. Called when a page that runs or shows a model is opened, and by the first
   * call that needs the worker; later calls do nothing.
   */
  start(): void {
    if (this.#client) return;
    const client = this.#makeClient();
    this.#client = client;
    this.started = true;
    client.onDeath((reason) => {
      this.died = reason;
      this.status = undefined;
      this.#loaded = undefined;
      this.loadedName = undefined;
      this.loading = undefined;
    });
    this.checkRuntime();
    void this.refreshFolders();
  }

  /**
   * Whether ONNX Runtime's WebGPU build (a 5 MB download the app fetches only when used) is in use here:
   * models run on WebGPU (measured faster, or chosen in Settings), or a model runs through transformers.js,
   * which runs on that build whatever the engine. The offline copy keeps it then, so it works offline too.
   */
  get usesWebgpuBuild(): boolean {
    if (this.status?.backend === "transformers") return true;
    // Measured with no adapter at all: WebGPU cannot run here, whatever Settings asks.
    if (this.engineCheck && !this.engineCheck.adapter) return false;
    return (
      this.#settings.device === "webgpu" ||
      this.runtime?.choice.device === "webgpu" ||
      this.status?.choice.device === "webgpu"
    );
  }

  #effective(worker: RuntimeStatus): BackendChoice {
    const wanted = this.#settings.device;
    if (wanted === "auto") return worker.choice;
    const name = wanted === "wasm" ? "WASM" : "WebGPU";
    const check = worker.check;
    return {
      device: wanted,
      reason: `${name} was chosen in Settings${check ? ` (the check measured: ${check.reason})` : ""}`,
      ...(check?.adapter ? { adapter: check.adapter } : {}),
    };
  }

  /** The startup engine check, once it has run (or been recalled). */
  get engineCheck(): EngineCheck | undefined {
    return this.#worker?.check;
  }

  /**
   * Asks the worker for its self-test and engine check, handing it the checks
   * remembered in this browser (it measures only when none was taken for this
   * adapter, ONNX Runtime version and thread count; "auto" is WASM meanwhile).
   */
  checkRuntime(): void {
    const remembered = readEngineChecks(this.#storage?.getItem(ENGINE_CHECKS_KEY) ?? null);
    this.client
      .call((api) => api.status(remembered))
      .then(
        (s) => {
          this.#worker = s;
          this.runtimeFailure = undefined;
          if (s.check) this.#remember(s.check);
          else void this.#awaitCheck(() => this.client.call((api) => api.engineCheck()));
          void this.refreshHubModels();
        },
        (error: unknown) => (this.runtimeFailure = errorText(error)),
      );
  }

  /** Waits for a check the worker runs, then takes it (and moves a loaded model if the engine changed). */
  async #awaitCheck(run: () => Promise<EngineCheck>): Promise<EngineCheck> {
    this.measuring = true;
    this.checkFailure = undefined;
    try {
      const check = await run();
      const worker = this.#worker;
      if (worker)
        this.#worker = {
          ...worker,
          check,
          choice: { device: check.device, reason: check.reason, ...(check.adapter ? { adapter: check.adapter } : {}) },
        };
      this.#remember(check);
      await this.#followEngine();
      return check;
    } catch (error) {
      this.checkFailure = errorText(error);
      throw error;
    } finally {
      this.measuring = false;
    }
  }

  #remember(check: EngineCheck): void {
    try {
      this.#storage?.setItem(ENGINE_CHECKS_KEY, rememberEngineCheck(this.#storage.getItem(ENGINE_CHECKS_KEY), check));
    } catch {
      // A full or blocked localStorage only costs a re-measurement next visit.
    }
  }

  /** Runs the engine check again, remembers it, and moves a loaded model to the new engine if it changed. */
  measureAgain(): Promise<EngineCheck> {
    return this.#awaitCheck(() => this.client.call((api) => api.measureEngines()));
  }

  /** The device the settings ask for, as the worker's load option. */
  get device(): NonNullable<WorkerLoadOptions["device"]> {
    return this.#settings.device;
  }

  /** Changes the engine preference (remembered) and reloads a loaded model on the engine it now means. */
  async setDevice(device: NonNullable<WorkerLoadOptions["device"]>): Promise<void> {
    this.#settings.update({ device });
    await this.#followEngine();
  }

  async #followEngine(): Promise<void> {
    const wanted = this.runtime?.choice.device;
    if (this.status && this.loadedSource && wanted && this.status.choice.device !== wanted)
      await this.load(this.loadedSource, this.#loadedOptions).catch(() => undefined);
  }

  /** Loads `source` (replacing the loaded model); rejects with the reason, and a newer load supersedes it. */
  async load(source: ModelSource, options: ModelLoadOptions = {}): Promise<ModelStatus> {
    const token = ++this.#loadToken;
    const name = sourceName(source);
    this.loading = { name, files: [] };
    this.#pendingFiles.clear();
    this.failure = undefined;
    // The worker releases the loaded model before it loads the next: nothing is loaded meanwhile.
    this.status = undefined;
    this.loadedSource = undefined;
    this.#loaded = undefined;
    this.loadedName = undefined;
    try {
      const status = await this.client.load(
        source,
        { ...options, device: this.device, hub: this.#settings.hub },
        (progress: LoadProgress) => {
          if (token !== this.#loadToken) return;
          if (progress.file) this.#queueFile(token, progress.file);
          else this.loading = { ...(this.loading ?? { name, files: [] }), name, progress };
        },
      );
      if (token !== this.#loadToken) throw new Error(`loading ${name} was superseded by a newer load`);
      this.#flushFiles(token);
      this.status = status;
      this.loadedSource = source;
      this.#loadedOptions = options;
      this.#loaded = name + (options.backend ? `#${options.backend}` : "");
      this.loadedName = this.#loaded;
      this.#keepSummary(summarize(this.#loaded, status));
      if (source.kind === "hub") void this.refreshHubModels();
      return status;
    } catch (error) {
      if (token === this.#loadToken) {
        this.failure = `${name}: ${errorText(error)}`;
        this.status = undefined;
        this.loadedSource = undefined;
        this.#loaded = undefined;
        this.loadedName = undefined;
        if (source.kind === "hub") void this.refreshHubModels();
      }
      throw error;
    } finally {
      if (token === this.#loadToken) this.loading = undefined;
    }
  }

  /** File progress arrives per chunk: shown at most once per frame. */
  #queueFile(token: number, file: FileProgress): void {
    this.#pendingFiles.set(file.path, file);
    if (this.#frame !== undefined) return;
    const flush = () => {
      this.#frame = undefined;
      this.#flushFiles(token);
    };
    this.#frame =
      typeof requestAnimationFrame === "function" ? requestAnimationFrame(flush) : (setTimeout(flush, 16) as never);
  }

  #flushFiles(token: number): void {
    if (token !== this.#loadToken || !this.loading || this.#pendingFiles.size === 0) return;
    const files = [...this.loading.files];
    for (const file of this.#pendingFiles.values()) {
      const at = files.findIndex((f) => f.path === file.path);
      if (at >= 0) files[at] = file;
      else files.push(file);
    }
    this.#pendingFiles.clear();
    this.loading = { ...this.loading, files };
  }

  #keepSummary(summary: ModelSummary): void {
    this.summaries = { ...this.summaries, [summary.name]: summary };
    this.#saveSummaries();
  }

  #saveSummaries(): void {
    try {
      this.#storage?.setItem(SUMMARIES_KEY, JSON.stringify(this.summaries));
    } catch {
      // Summaries are a convenience: the model itself is unaffected.
    }
  }

  /**
   * The loaded model's status when it is `source` already; the load in flight when `ensure` is loading `source`
   * already; else loads it.
   */
  async ensure(source: ModelSource, options: ModelLoadOptions = {}): Promise<ModelStatus> {
    const wanted = sourceName(source) + (options.backend ? `#${options.backend}` : "");
    if (this.status && this.#loaded === wanted && !this.died) return this.status;
    // The same model already loading (a form loads it when opened; Start then waits for that load, not a new one).
    const ensuring = this.#ensuring;
    if (this.loading && ensuring?.wanted === wanted && ensuring.token === this.#loadToken) return ensuring.loaded;
    const loaded = this.load(source, options);
    this.#ensuring = { wanted, token: this.#loadToken, loaded };
    return loaded;
  }

  /** The load `ensure` started and for which model; a later load (another `load` call) supersedes it. */
  #ensuring: { readonly wanted: string; readonly token: number; readonly loaded: Promise<ModelStatus> } | undefined;

  /** Stops the load in flight (its files read so far stay cached); the loaded model, if any, is gone. */
  async cancelLoad(): Promise<void> {
    if (!this.loading) return;
    const name = this.loading.name;
    this.#loadToken++;
    this.loading = undefined;
    this.failure = `${name}: loading was cancelled`;
    await this.client.call((api) => api.cancel()).catch(() => undefined);
  }

  /** Releases the loaded model (its sessions and memory); nothing is loaded afterwards. */
  async unload(): Promise<void> {
    this.#loadToken++;
    this.loading = undefined;
    this.status = undefined;
    this.loadedSource = undefined;
    this.#loaded = undefined;
    this.loadedName = undefined;
    await this.#client?.call((api) => api.dispose());
  }

  /**
   * Inspects `source` in the worker from its config files and ONNX protobufs
   * (no session, nothing loaded) and keeps the result for the Models page.
   */
  async inspect(source: ModelSource): Promise<ModelInspection> {
    const inspection = await this.client.call((api) => api.inspect(source, { hub: this.#settings.hub }));
    this.inspections = { ...this.inspections, [sourceName(source)]: inspection };
    return inspection;
  }

  /** Re-reads the list of kept folders. */
  async refreshFolders(): Promise<void> {
    try {
      this.folders = await this.#folders.list();
      this.foldersFailure = undefined;
    } catch (error) {
      this.foldersFailure = errorText(error);
    }
  }

  /** Keeps a folder's files in this browser (replacing a folder of that name) and lists it. */
  async addFolder(name: string, files: readonly { path: string; file: Blob }[]): Promise<StoredFolder> {
    const folder = await this.#folders.save(name, files);
    await this.refreshFolders();
    return folder;
  }

  /** Forgets a kept folder (unloading it first if it is the loaded model). */
  async removeFolder(name: string): Promise<void> {
    if (this.loadedSource?.kind === "files" && this.loadedSource.key === name) await this.unload();
    await this.#folders.remove(name);
    this.#forgetSummary(`files:${name}`);
    await this.refreshFolders();
  }

  #forgetSummary(name: string): void {
    const next = { ...this.summaries };
    for (const key of Object.keys(next)) if (key === name || key.startsWith(`${name}#`)) delete next[key];
    this.summaries = next;
    this.#saveSummaries();
  }

  /** A kept folder as a model source (its files read back from this browser). */
  async folderSource(name: string): Promise<ModelSource> {
    return { kind: "files", key: name, files: await this.#folders.files(name) };
  }

  /**
   * The source a stored name (`sourceName`) stands for: bundled and hub
   * names as they are, `files:<name>` from the kept folder of that name.
   */
  async sourceFor(name: string): Promise<ModelSource> {
    const [kind, ...rest] = name.split(":");
    const value = rest.join(":").replace(/#[a-z]+$/, "");
    if (kind === "bundled") return { kind: "bundled", key: value };
    if (kind === "hub") return { kind: "hub", id: value };
    if (kind === "url") return { kind: "url", url: value };
    if (kind === "files") return this.folderSource(value);
    throw new Error(`'${name}' names no model source: expected bundled:…, hub:…, url:… or files:…`);
  }

  /** Re-reads which hub models this browser keeps (for the hub address in Settings). */
  async refreshHubModels(): Promise<void> {
    try {
      this.hubModels = await this.client.call((api) => api.cachedHubModels(this.#settings.hub));
    } catch {
      // The worker may be restarting; the list refreshes after the next load.
    }
  }

  /** Forgets a hub model's kept files (unloading it first if loaded): the next load downloads it again. */
  async forgetHubModel(id: string): Promise<void> {
    if (this.loadedSource?.kind === "hub" && this.loadedSource.id === id) await this.unload();
    await this.client.call((api) => api.forgetHubModel(id, this.#settings.hub));
    this.#forgetSummary(`hub:${id}`);
    await this.refreshHubModels();
  }

  /** Starts a fresh worker (after a death, or to free memory); nothing is loaded in it. */
  restart(): void {
    if (!this.#client) return this.start();
    this.#loadToken++;
    this.#client.restart();
    this.died = undefined;
    this.status = undefined;
    this.loadedSource = undefined;
    this.#loaded = undefined;
    this.loadedName = undefined;
    this.loading = undefined;
    this.checkRuntime();
  }

  dispose(): void {
    this.#client?.terminate("the page closed");
  }
}
