/// <reference lib="webworker" />
import { expose } from "comlink";
import type { Capability } from "../src/core/capability.ts";
import type { CaptureOptions, Model, ModelInput, ModelSpec, Progress, Trace } from "../src/core/model.ts";
import { chooseBackend, type BackendChoice, type GpuLike } from "../src/models/backend-choice.ts";
import {
  loadOrtModel,
  type AttentionSource,
  type Generation,
  type OrtGenerateOptions,
  type OrtModel,
} from "../src/models/ort-model.ts";
import { configureOrtWasm } from "../src/models/ort-env.browser.ts";
import { droppedFiles, fetchFiles, webSessions } from "../src/models/ort-session.browser.ts";
import { readJson, type FileSource } from "../src/models/session.ts";
import { sha256Hex } from "../src/datasets/hash.ts";
import { runEvalJob, type EvalJobProgress, type EvalJobRequest, type EvalJobResult } from "./eval-job.ts";
import { getSpec, inferSpec, isImageModel } from "../src/models/specs/index.ts";
import type { TransformersModel } from "../src/models/transformers-backend.ts";

/** What the page learns when the model worker starts: the engine it will use and a WASM self-test. */
export interface RuntimeStatus {
  readonly choice: BackendChoice;
  readonly ort: {
    readonly version: string;
    readonly wasmPaths: string;
    readonly threads: number;
    readonly crossOriginIsolated: boolean;
    /** `double.onnx` run on the WASM backend: [1, 2] → [2, 4]. */
    readonly selfTest: readonly number[];
  };
}

/** Where the worker should get a model's files. */
export type ModelSource =
  | { readonly kind: "bundled"; readonly key: string }
  | { readonly kind: "url"; readonly url: string; readonly key?: string }
  | { readonly kind: "files"; readonly files: ReadonlyMap<string, Blob> | readonly File[]; readonly key: string }
  | { readonly kind: "hub"; readonly id: string };

export interface WorkerLoadOptions {
  /** "auto" (default): WebGPU when an adapter exists, else WASM. */
  readonly device?: "auto" | "webgpu" | "wasm";
  /**
   * "ort" (default): our white-box runtime. "transformers": transformers.js
   * generation (black box for internals) — bundled models or hub ids.
   */
  readonly backend?: "ort" | "transformers";
}

/** A loaded model's status, as the page shows it. */
export interface ModelStatus {
  readonly key: string;
  readonly spec: ModelSpec;
  readonly capabilities: readonly Capability[];
  readonly attention: AttentionSource;
  /** The engine the model runs on and why. */
  readonly choice: BackendChoice;
  /** Model files read while loading (paths relative to the model folder). */
  readonly filesRead: readonly string[];
  /** sha256 (first 12 hex) of each model file read: the model's identity in a run's fingerprint, as the CLI writes it. */
  readonly fileHashes: Readonly<Record<string, string>>;
}

const ort = configureOrtWasm();
let model: OrtModel | undefined;
let blackBox: TransformersModel | undefined;
let modelStatus: ModelStatus | undefined;
let current: AbortController | undefined;
/** Eval jobs running in this worker, by run id. */
const jobs = new Map<string, AbortController>();

function sourceFiles(
  source: ModelSource,
  read: string[],
  hashes: Record<string, string> = {},
): { files: FileSource; key: string; where: string; spec?: ModelSpec } {
  const base = import.meta.env.BASE_URL;
  const counted =
    (files: FileSource): FileSource =>
    async (path) => {
      read.push(path);
      const bytes = await files(path);
      hashes[path] = sha256Hex(bytes).slice(0, 12);
      return bytes;
    };
  switch (source.kind) {
    case "bundled": {
      const spec = getSpec(source.key);
      if (!spec) throw new Error(`no bundled model '${source.key}'; bundled models are tiny-vlm and tiny-lm`);
      const where = new URL(`${base}${spec.source}/`, self.location.origin).href;
      return { files: counted(fetchFiles(where)), key: spec.key, where, spec };
    }
    case "url":
      return { files: counted(fetchFiles(source.url)), key: source.key ?? source.url, where: source.url };
    case "files":
      return { files: counted(droppedFiles(source.files as never)), key: source.key, where: "the dropped folder" };
    case "hub": {
      if (!/^[\w.-]+\/[\w.-]+$/.test(source.id)) throw new Error(`'${source.id}' is not a hub id (owner/name)`);
      const where = `https://huggingface.co/${source.id}/resolve/main/`;
      return { files: counted(fetchFiles(where)), key: source.id, where };
    }
  }
}

async function decideDevice(wanted: WorkerLoadOptions["device"]): Promise<BackendChoice> {
  if (wanted === "wasm") return { device: "wasm", reason: "WASM was asked for" };
  const choice = await chooseBackend((navigator as Navigator & { gpu?: GpuLike }).gpu);
  if (wanted === "webgpu" && choice.device !== "webgpu")
    throw new Error(`WebGPU was asked for but is unavailable: ${choice.reason}`);
  return choice;
}

function requireModel(): OrtModel {
  if (!model) throw new Error("no model is loaded in this worker: call load() first");
  return model;
}

/** Runs one cancellable call; `cancel()` aborts the one in flight. */
async function cancellable<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  current = controller;
  try {
    return await fn(controller.signal);
  } finally {
    if (current === controller) current = undefined;
  }
}

/** transformers.js in this worker: the app's own /models/ for bundled models, the hub for ids (online only). */
async function loadTransformers(source: ModelSource, options: WorkerLoadOptions): Promise<ModelStatus> {
  if (source.kind !== "bundled" && source.kind !== "hub")
    throw new Error(
      "the transformers backend loads bundled models or hub ids; use the ort backend for a dropped folder",
    );
  const spec = source.kind === "bundled" ? getSpec(source.key) : undefined;
  if (source.kind === "bundled" && !spec) throw new Error(`no bundled model '${source.key}'`);
  const id = source.kind === "bundled" ? source.key : source.id;
  // Loaded on demand: the white-box path never pays for transformers.js.
  const [{ env: transformersEnv }, { transformersBackend }] = await Promise.all([
    import("@huggingface/transformers"),
    import("../src/models/transformers-backend.ts"),
  ]);
  transformersEnv.allowLocalModels = !!spec;
  transformersEnv.allowRemoteModels = !spec;
  transformersEnv.localModelPath = `${import.meta.env.BASE_URL}models/`;
  const choice = await decideDevice(options.device);
  const resolved = spec ?? (await inferHubSpec(id));
  blackBox = await transformersBackend({ modelId: () => id, device: choice.device }).load(resolved);
  modelStatus = {
    key: id,
    spec: resolved,
    capabilities: [...blackBox.capabilities],
    attention: {
      kind: "unreadable",
      reason: "transformers.js generation does not return decoder attention; use the ort backend",
    },
    choice,
    filesRead: [],
    fileHashes: {},
  };
  return modelStatus;
}

async function inferHubSpec(id: string): Promise<ModelSpec> {
  const files = fetchFiles(`https://huggingface.co/${id}/resolve/main/`);
  const config = await readJson(files, "config.json");
  const image = isImageModel(config);
  return inferSpec(
    id,
    id,
    config,
    image ? await readJson(files, "preprocessor_config.json") : undefined,
    image ? await readJson(files, "processor_config.json") : undefined,
  );
}

const api = {
  /** Chooses the backend and proves ONNX Runtime's WASM build loads and runs here. */
  async status(): Promise<RuntimeStatus> {
    const gpu = (navigator as Navigator & { gpu?: GpuLike }).gpu;
    const choice = await chooseBackend(gpu);
    const url = new URL(`${import.meta.env.BASE_URL}selftest/double.onnx`, self.location.origin);
    const session = await ort.InferenceSession.create(url.href, { executionProviders: ["wasm"] });
    try {
      const x = new ort.Tensor("float32", Float32Array.from([1, 2]), [2]);
      const { y } = await session.run({ x });
      return {
        choice,
        ort: {
          version: ort.env.versions.web ?? "unknown",
          wasmPaths: String(ort.env.wasm.wasmPaths),
          threads: ort.env.wasm.numThreads ?? 1,
          crossOriginIsolated: self.crossOriginIsolated,
          selfTest: Array.from(y!.data as Float32Array),
        },
      };
    } finally {
      await session.release();
    }
  },

  /**
   * Loads one model (replacing any loaded one) on WebGPU when available, else
   * WASM; a WebGPU failure falls back to WASM with the reason kept in the status.
   */
  async load(
    source: ModelSource,
    options: WorkerLoadOptions = {},
    onProgress?: (p: Progress) => void,
  ): Promise<ModelStatus> {
    await api.dispose();
    if (options.backend === "transformers") return loadTransformers(source, options);
    const read: string[] = [];
    const hashes: Record<string, string> = {};
    const { files, key, where, spec } = sourceFiles(source, read, hashes);
    let choice = await decideDevice(options.device);
    const open = (device: "webgpu" | "wasm") =>
      cancellable((signal) =>
        loadOrtModel(files, webSessions(device), {
          ...(spec ? { spec } : {}),
          key,
          source: where,
          signal,
          ...(onProgress ? { onProgress: (p: Progress) => void (lastProgress = onProgress(p)) } : {}),
        }),
      );
    let loaded: OrtModel;
    let lastProgress: unknown;
    try {
      loaded = await open(choice.device);
    } catch (error) {
      if (choice.device !== "webgpu" || options.device === "webgpu") throw error;
      choice = { device: "wasm", reason: `WebGPU failed to run this model (${(error as Error).message}); using WASM` };
      loaded = await open("wasm");
    }
    // The page's progress callback runs over its own channel: let the last report arrive before the result.
    await Promise.resolve(lastProgress).catch(() => undefined);
    model = loaded;
    modelStatus = {
      key,
      spec: loaded.spec,
      capabilities: [...loaded.capabilities],
      attention: loaded.attention,
      choice,
      filesRead: read,
      fileHashes: hashes,
    };
    return modelStatus;
  },

  /** The loaded model's status, or undefined. */
  modelStatus(): ModelStatus | undefined {
    return modelStatus;
  },

  /** Generates an answer (greedy by default; seeded sampling with `temperature`). */
  async generate(input: ModelInput, options: Omit<OrtGenerateOptions, "signal"> = {}): Promise<Generation> {
    if (blackBox) {
      const ids = await blackBox.generateIds(input, options);
      // transformers.js does not say why it stopped nor how long the prompt was: -1 = unknown.
      return { text: blackBox.decode(ids), ids, promptLength: -1, stop: "eos" };
    }
    const m = requireModel();
    return cancellable((signal) => m.generateTokens(input, { ...options, signal }));
  },

  /** One teacher-forced forward returning the asked reductions as small typed arrays. */
  async forward(input: ModelInput, capture: Omit<CaptureOptions, "signal"> = {}): Promise<Trace> {
    if (blackBox) return blackBox.forward(input, capture);
    const m = requireModel();
    return cancellable((signal) => m.forward(input, { ...capture, signal }));
  },

  /**
   * Runs (or resumes) an eval of the loaded model inside this worker, writing
   * every judged item to IndexedDB as it goes; progress comes back at most
   * every 100 ms. `cancelEval(runId)` stops it, keeping what was judged.
   */
  async runEval(request: EvalJobRequest, onProgress?: (p: EvalJobProgress) => void): Promise<EvalJobResult> {
    const loaded: Model | undefined = model ?? blackBox;
    if (!loaded || !modelStatus) throw new Error("no model is loaded in this worker: load one before running an eval");
    const key = request.resume ?? request.runId;
    if (key !== undefined && jobs.has(key)) throw new Error(`run '${key}' is already running in this worker`);
    const controller = new AbortController();
    const started = key ?? `job-${jobs.size}-${Date.now()}`;
    jobs.set(started, controller);
    let lastProgress: unknown;
    const files = Object.fromEntries(
      Object.entries(modelStatus.fileHashes).filter(([path]) => loaded.spec.files.includes(path)),
    );
    try {
      const result = await runEvalJob(
        request,
        loaded,
        { key: loaded.spec.key, ...(Object.keys(files).length ? { files } : {}) },
        controller.signal,
        (p) => {
          if (!jobs.has(p.runId)) jobs.set(p.runId, controller);
          if (onProgress) lastProgress = onProgress(p);
        },
      );
      await Promise.resolve(lastProgress).catch(() => undefined);
      return result;
    } finally {
      for (const [id, c] of jobs) if (c === controller) jobs.delete(id);
    }
  },

  /** Stops the eval of `runId` running in this worker (what was judged is kept; it can be resumed). */
  cancelEval(runId: string): boolean {
    const controller = jobs.get(runId);
    controller?.abort();
    return !!controller;
  },

  /** Cancels the call in flight (it rejects with "… was cancelled"). */
  cancel(): void {
    current?.abort();
  },

  /** Releases the loaded model's sessions. */
  async dispose(): Promise<void> {
    current?.abort();
    for (const controller of jobs.values()) controller.abort();
    const m = model;
    const b = blackBox;
    model = undefined;
    blackBox = undefined;
    modelStatus = undefined;
    await Promise.all([m?.dispose(), b?.dispose()]);
  },
};

export type ModelWorkerApi = typeof api;
expose(api);
