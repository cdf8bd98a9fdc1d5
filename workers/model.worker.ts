/// <reference lib="webworker" />
import { expose, transfer } from "comlink";
import { CapabilityError, type Capability } from "../src/core/capability.ts";
import type { CaptureOptions, ImagePixels, Model, ModelInput, ModelSpec, Progress, Trace } from "../src/core/model.ts";
import {
  chooseBackend,
  engineCheckKey,
  type BackendChoice,
  type EngineCheck,
  type GpuLike,
} from "../src/models/backend-choice.ts";
import { blackBoxCapabilities } from "../src/models/backends.ts";
import { DEFAULT_HUB, HUB_CACHE, hubBase, isHubId, normalizeHub, parseHubUrl } from "../src/models/hub.ts";
import { hubFileList } from "../src/models/http-files.ts";
import {
  loadOrtModel,
  type AttentionSource,
  type Generation,
  type OrtGenerateOptions,
  type OrtModel,
} from "../src/models/ort-model.ts";
import { configureOrtWasm } from "../src/models/ort-env.browser.ts";
import {
  cachedFetch,
  cachedFiles,
  droppedFiles,
  fetchFiles,
  webSessions,
  type FileProgress,
} from "../src/models/ort-session.browser.ts";
import { MissingFileError, readJson, type FileSource } from "../src/models/session.ts";
import { sha256Hex } from "../src/datasets/hash.ts";
import { runEvalJob, type EvalJobProgress, type EvalJobRequest, type EvalJobResult } from "./eval-job.ts";
import { explain, keptMatrix, type ExplainRequest, type Explanation } from "./explain.ts";
import {
  investigationModelInfo,
  investigationReportFiles,
  runInvestigationJob,
  type InvestigateJobRequest,
  type InvestigateJobResult,
  type InvestigationUpdate,
} from "./investigate-job.ts";
import { measureEngines } from "./engine-check.ts";
import { BackgroundGate } from "./background-gate.ts";
import { pageL4, type PageL4Factory } from "./l4-job.ts";
import { startModelHelper } from "./model-helper.ts";
import { SharedCopy } from "./model-copies.ts";
import { warmUp, type WarmUp } from "./warm-up.ts";
import { inspectModel, planModel, type ModelInspection } from "../src/models/inspect.ts";
import type { AttentionStatus } from "../src/models/attention-status.ts";
import { getSpec, inferSpec, isImageModel } from "../src/models/specs/index.ts";
import type { TransformersModel } from "../src/models/transformers-backend.ts";

export type { EngineCheck } from "../src/models/backend-choice.ts";
export type { FileProgress } from "../src/models/ort-session.browser.ts";
export type { ModelInspection } from "../src/models/inspect.ts";

/** What the page learns when the model worker starts: the measured engine choice and a WASM self-test. */
export interface RuntimeStatus {
  /** The engine "auto" runs on, and why (the engine check's decision; WASM until it has run). */
  readonly choice: BackendChoice;
  /** The engine check behind `choice`, with its numbers; absent while it runs (see `engineCheck()`). */
  readonly check?: EngineCheck;
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
  /** "auto" (default): the engine the startup check measured as faster and trusted; or the one named. */
  readonly device?: "auto" | "webgpu" | "wasm";
  /**
   * "ort" (default): our white-box runtime. "transformers": transformers.js
   * generation (black box for internals) — bundled models or hub ids.
   */
  readonly backend?: "ort" | "transformers";
  /** The hub address hub ids are fetched from (default https://huggingface.co). */
  readonly hub?: string;
  /**
   * Capabilities the caller needs. Refused (CapabilityError) before any
   * weight is read when the backend cannot give them for this model's spec,
   * and after loading when the graph turns out not to (fused attention).
   */
  readonly want?: readonly Capability[];
  /**
   * true (default): a session run repeating an earlier one's feeds is answered
   * from memory (`memoSessions`: the vision encoder once per image, the
   * unmodified answer once per question). false: every run is computed (a
   * benchmark that times the same forward again and again).
   */
  readonly memo?: boolean;
}

/** Load progress: the stage (sessions created), or one file's bytes when `file` is set. */
export interface LoadProgress extends Progress {
  readonly file?: FileProgress;
}

/** A loaded model's status, as the page shows it. */
export interface ModelStatus {
  readonly key: string;
  readonly spec: ModelSpec;
  readonly capabilities: readonly Capability[];
  readonly attention: AttentionSource;
  /** The full attention status of the graph forwards run through (ort backend): found, where, fused ops, why not, advice. */
  readonly attentionStatus?: AttentionStatus;
  /** The engine the model runs on and why. */
  readonly choice: BackendChoice;
  /** The runtime: our white-box ONNX Runtime code, or transformers.js generation. */
  readonly backend: "ort" | "transformers";
  /** Model files read while loading (paths relative to the model folder). */
  readonly filesRead: readonly string[];
  /** sha256 (first 12 hex) of each model file read: the model's identity in a run's fingerprint, as the CLI writes it. */
  readonly fileHashes: Readonly<Record<string, string>>;
  /** Size in bytes of each model file read. */
  readonly fileBytes: Readonly<Record<string, number>>;
}

/** A hub model whose files this browser keeps, as listed from the hub cache. */
export interface CachedHubModel {
  readonly id: string;
  readonly files: readonly { readonly path: string; readonly bytes: number }[];
  readonly bytes: number;
}

const ort = configureOrtWasm();
let model: OrtModel | undefined;
let blackBox: TransformersModel | undefined;
let modelStatus: ModelStatus | undefined;
/** L4 for the loaded ort model: its folder read again (uncounted) when an investigation trains the head adapter. */
let modelL4: PageL4Factory | undefined;
/**
 * A second copy of the loaded ort model for evals and investigations, in a helper worker: WASM runs a session on one
 * thread, so a second worker puts a second core to work on the cases (a model on WebGPU, or over `COPY_MAX_BYTES`,
 * gets none). Started by the first job that wants it, kept for the next ones, closed with the model.
 */
let modelCopy: SharedCopy | undefined;
/** The largest model (its files' bytes) loaded a second time for a helper worker: memory is doubled. */
const COPY_MAX_BYTES = 256 * 1024 * 1024;
let current: AbortController | undefined;
/** Eval jobs and investigations running in this worker, by run id. */
const jobs = new Map<string, AbortController>();
/**
 * The engine check runs in steps between the page's calls (loads, answers, jobs): never beside one, which
 * would time the call and, on the WebGPU build transformers.js shares, break it (see BackgroundGate).
 */
const gate = new BackgroundGate();

/**
 * A bundled model as an agentic investigation's judge, beside the model under investigation: loaded through
 * the same ONNX Runtime path (WASM, no memo), for generation only; the job disposes it when the run ends.
 */
async function judgeModel(key: string): Promise<Model> {
  const { files, where, spec } = sourceFiles({ kind: "bundled", key }, newReadLog(), DEFAULT_HUB);
  return loadOrtModel(files, webSessions("wasm", { memo: false }), { ...(spec ? { spec } : {}), key, source: where });
}

/** Forgets a finished job's ids. */
function endJob(controller: AbortController): void {
  for (const [id, c] of jobs) if (c === controller) jobs.delete(id);
}
/** The engine check this worker decided by ("auto" loads use it), and one in flight. */
let engine: EngineCheck | undefined;
let engineRun: Promise<EngineCheck> | undefined;
/** Checks the page remembers (handed over by `status()`, which the page calls first): a later "auto" load waits for them. */
let remembered: readonly EngineCheck[] = [];
/** The load in progress: where its files are, and who wants to hear about each one (transformers.js's fetches). */
let watching:
  | {
      prefix: string;
      hub: string;
      onFile?: (p: FileProgress) => void;
      record: (path: string, bytes: Uint8Array) => void;
    }
  | undefined;

interface ReadLog {
  readonly read: string[];
  readonly hashes: Record<string, string>;
  readonly sizes: Record<string, number>;
}

function newReadLog(): ReadLog {
  return { read: [], hashes: {}, sizes: {} };
}

function record(log: ReadLog, path: string, bytes: Uint8Array): void {
  if (!log.read.includes(path)) log.read.push(path);
  log.hashes[path] = sha256Hex(bytes).slice(0, 12);
  log.sizes[path] = bytes.length;
}

function sourceFiles(
  source: ModelSource,
  log: ReadLog,
  hub: string,
  onFile?: (p: FileProgress) => void,
  hubList?: () => Promise<readonly string[]>,
): { files: FileSource; key: string; where: string; spec?: ModelSpec } {
  const base = import.meta.env.BASE_URL;
  // Every file read is recorded (hash, size); a source that lists its files keeps its list.
  const counted = (files: FileSource, list = files.list): FileSource => {
    const read = async (path: string) => {
      const bytes = await files(path);
      record(log, path, bytes);
      return bytes;
    };
    return list ? Object.assign(read, { list }) : read;
  };
  const fetchOptions = onFile ? { onFile } : {};
  switch (source.kind) {
    case "bundled": {
      const spec = getSpec(source.key);
      if (!spec) throw new Error(`no bundled model '${source.key}'; bundled models are tiny-vlm and tiny-lm`);
      const where = new URL(`${base}${spec.source}/`, self.location.origin).href;
      return { files: counted(fetchFiles(where, fetchOptions)), key: spec.key, where, spec };
    }
    case "url":
      return {
        files: counted(fetchFiles(source.url, fetchOptions)),
        key: source.key ?? source.url,
        where: source.url,
      };
    case "files":
      return {
        files: counted(droppedFiles(source.files as never)),
        key: source.key,
        where: `the folder '${source.key}'`,
      };
    case "hub": {
      if (!isHubId(source.id)) throw new Error(`'${source.id}' is not a hub id (owner/name)`);
      const where = hubBase(hub, source.id);
      const files = fetchFiles(where, { ...fetchOptions, cache: HUB_CACHE });
      return { files: counted(files, hubList), key: source.id, where };
    }
  }
}

/**
 * A hub repository's file list (the hub's API, through the hub cache), so the
 * model's layout is found without probing file names; undefined when the
 * server has no such API (a plain mirror): names are then probed.
 */
async function hubListing(source: ModelSource, hub: string): Promise<(() => Promise<readonly string[]>) | undefined> {
  if (source.kind !== "hub" || !isHubId(source.id)) return undefined;
  try {
    const list = await hubFileList(hub, source.id, { fetch: (url) => cachedFetch(String(url), HUB_CACHE) });
    return async () => list;
  } catch {
    return undefined;
  }
}

/** A spec inferred from a folder's config files alone (no weights read), for ids and folders not registered. */
async function inferSpecFrom(files: FileSource, key: string, where: string): Promise<ModelSpec> {
  let config: Record<string, unknown>;
  try {
    config = await readJson(files, "config.json");
  } catch (error) {
    if (error instanceof MissingFileError)
      throw new Error(
        `${where} has no config.json: not a model folder (expected config.json, tokenizer.json and onnx/*.onnx)`,
        {
          cause: error,
        },
      );
    throw error;
  }
  const image = isImageModel(config);
  const optional = async (path: string) => {
    try {
      return await readJson(files, path);
    } catch (error) {
      if (error instanceof MissingFileError) return undefined;
      throw error;
    }
  };
  return inferSpec(
    key,
    where,
    config,
    image ? await readJson(files, "preprocessor_config.json") : undefined,
    image ? await optional("processor_config.json") : undefined,
  );
}

/** Refuses, before anything heavy is read, a load that cannot give what is wanted. */
function negotiate(want: readonly Capability[], provided: ReadonlySet<Capability>, context: string): void {
  const missing = want.filter((c) => !provided.has(c));
  if (missing.length) throw new CapabilityError(missing, [...provided], context);
}

function adapterOf(choice: BackendChoice): string | undefined {
  return choice.device === "webgpu" ? choice.adapter : undefined;
}

/** The engine "auto" means until the check has run: never WebGPU unmeasured. */
const PROVISIONAL: BackendChoice = {
  device: "wasm",
  provisional: true,
  reason:
    "WASM for now: the engine check (a reference forward on WASM and on WebGPU) has not finished; WebGPU is used only once measured faster and trusted",
};

function choiceOf(check: EngineCheck): BackendChoice {
  return { device: check.device, reason: check.reason, ...(check.adapter ? { adapter: check.adapter } : {}) };
}

/** The key checks are remembered under, for this adapter, ONNX Runtime version and thread count. */
async function engineKey(gpu: GpuLike | undefined): Promise<string> {
  return engineCheckKey({
    adapter: adapterOf(await chooseBackend(gpu)),
    ortVersion: ort.env.versions.web ?? "unknown",
    threads: ort.env.wasm.numThreads ?? 1,
  });
}

/** Takes the remembered check measured for this adapter, ONNX Runtime version and threads, if there is one. */
async function recallEngine(): Promise<EngineCheck | undefined> {
  if (engine) return engine;
  if (!remembered.length) return undefined;
  const key = await engineKey((navigator as Navigator & { gpu?: GpuLike }).gpu);
  engine ??= remembered.find((check) => check.key === key);
  return engine;
}

/**
 * Measures the engines (WASM and WebGPU on the reference forward) and makes
 * the result the one this worker goes by. Concurrent callers share one run;
 * `force` (Measure again) measures again even when a result exists, and
 * measures a software WebGPU adapter too, which the startup check leaves out.
 */
async function checkEngine(options: { force?: boolean } = {}): Promise<EngineCheck> {
  // A measurement of speed: the model's warm-up must not run beside it.
  await endWarmUp();
  if (!options.force && engine) return engine;
  if (engineRun) return engineRun;
  const gpu = (navigator as Navigator & { gpu?: GpuLike }).gpu;
  // Held while the page's calls run: the check's forwards (seconds each on a software adapter) would slow them
  // and be measured against them.
  const run = (async () =>
    measureEngines(gpu, await engineKey(gpu), (step) => gate.step(step), { software: !!options.force }))();
  engineRun = run;
  try {
    engine = await run;
    return engine;
  } finally {
    if (engineRun === run) engineRun = undefined;
  }
}

async function decideDevice(wanted: WorkerLoadOptions["device"]): Promise<BackendChoice> {
  if (wanted === "wasm") return { device: "wasm", reason: "WASM was asked for" };
  if (wanted === "webgpu") {
    const choice = await chooseBackend((navigator as Navigator & { gpu?: GpuLike }).gpu);
    if (choice.device !== "webgpu") throw new Error(`WebGPU was asked for but is unavailable: ${choice.reason}`);
    return { ...choice, reason: `WebGPU was asked for (${choice.reason})` };
  }
  // "auto" never waits for a measurement: until one exists it is WASM (the page reloads once the check picks WebGPU).
  const check = await recallEngine();
  return check ? choiceOf(check) : PROVISIONAL;
}

/** The loaded model's warm-up, while it may still be running (see `warmUp`). */
let warming: WarmUp | undefined;

/** Ends the warm-up before a real call: it waits for the made-up call in flight, then the model is the caller's. */
async function endWarmUp(): Promise<void> {
  const warm = warming;
  warming = undefined;
  if (warm) await warm.stop();
}

function requireModel(): OrtModel {
  if (!model) throw new Error("no model is loaded in this worker: call load() first");
  return model;
}

const isPng = (bytes: Uint8Array) => [0x89, 0x50, 0x4e, 0x47].every((b, i) => bytes[i] === b);

/**
 * A dropped JPEG, WebP, GIF or BMP as RGBA pixels: the model's own decoder
 * reads PNG only (identical pixels in Node and the page), so the browser
 * decodes the rest here, off the page's thread.
 */
async function browserPixels(bytes: Uint8Array): Promise<ImagePixels> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(new Blob([bytes as BlobPart]));
  } catch {
    throw new Error("the browser could not decode this image: use a PNG or JPEG file");
  }
  const { width, height } = bitmap;
  const context = new OffscreenCanvas(width, height).getContext("2d");
  if (!context) throw new Error("this browser gives workers no 2-D canvas to decode images: use a PNG file");
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  return { width, height, data: context.getImageData(0, 0, width, height).data };
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

/** The buffers a trace's typed arrays own, to hand to the page without a copy (shared memory excluded). */
function traceBuffers(trace: Trace): ArrayBuffer[] {
  const arrays: ArrayBufferView[] = [trace.tokenIds, trace.imagePositions, trace.answerPositions];
  if (trace.logits) arrays.push(trace.logits.positions, trace.logits.values);
  for (const tensor of Object.values(trace.reductions)) if (tensor) arrays.push(tensor.data);
  const buffers = new Set<ArrayBuffer>();
  for (const array of arrays)
    if (array.buffer instanceof ArrayBuffer && array.byteLength === array.buffer.byteLength) buffers.add(array.buffer);
  return [...buffers];
}

/**
 * transformers.js's fetch in this worker: hub files go through the hub cache
 * (so a second load downloads nothing, 404s included) and every file of the
 * model being loaded is reported and recorded; anything else is a plain fetch.
 */
async function transformersFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  const url = new URL(String(input), self.location.origin).href;
  const load = watching;
  const path = load && url.startsWith(load.prefix) ? url.slice(load.prefix.length) : undefined;
  const report = (p: Omit<FileProgress, "path">) => {
    if (path !== undefined) load?.onFile?.({ path, ...p });
  };
  const response =
    load && parseHubUrl(load.hub, url) ? await cachedFetch(url, HUB_CACHE, report) : await fetch(input, init);
  if (path === undefined || !response.ok) return response;
  const bytes = new Uint8Array(await response.clone().arrayBuffer());
  load!.record(path, bytes);
  return response;
}

/** transformers.js in this worker: the app's own /models/ for bundled models, the hub (address `hub`) for ids. */
async function loadTransformers(
  source: ModelSource,
  options: WorkerLoadOptions,
  hub: string,
  onFile: ((p: FileProgress) => void) | undefined,
): Promise<ModelStatus> {
  if (source.kind !== "bundled" && source.kind !== "hub")
    throw new Error("the transformers backend loads bundled models or hub ids; use the ort backend for a folder");
  if (source.kind === "hub" && !isHubId(source.id)) throw new Error(`'${source.id}' is not a hub id (owner/name)`);
  const spec = source.kind === "bundled" ? getSpec(source.key) : undefined;
  if (source.kind === "bundled" && !spec) throw new Error(`no bundled model '${source.key}'`);
  const id = source.kind === "bundled" ? source.key : source.id;
  const log = newReadLog();
  const prefix =
    source.kind === "bundled"
      ? new URL(`${import.meta.env.BASE_URL}models/${id}/`, self.location.origin).href
      : hubBase(hub, id);
  const resolved =
    spec ?? (await inferSpecFrom(fetchFiles(prefix, { cache: HUB_CACHE, ...(onFile ? { onFile } : {}) }), id, prefix));
  negotiate(options.want ?? [], blackBoxCapabilities(resolved), `the transformers backend for ${id}`);
  // Loaded on demand: the white-box path never pays for transformers.js.
  const [{ env: transformersEnv }, { transformersBackend }] = await Promise.all([
    import("@huggingface/transformers"),
    import("../src/models/transformers-backend.ts"),
  ]);
  transformersEnv.allowLocalModels = !!spec;
  transformersEnv.allowRemoteModels = !spec;
  transformersEnv.localModelPath = `${import.meta.env.BASE_URL}models/`;
  transformersEnv.remoteHost = `${hub}/`;
  // Our hub cache keeps files and 404s (transformers.js's own cache would keep files only, and twice).
  transformersEnv.useBrowserCache = false;
  transformersEnv.fetch = transformersFetch;
  const choice = await decideDevice(options.device);
  watching = { prefix, hub, ...(onFile ? { onFile } : {}), record: (path, bytes) => record(log, path, bytes) };
  try {
    blackBox = await transformersBackend({ modelId: () => id, device: choice.device }).load(resolved);
  } finally {
    watching = undefined;
  }
  modelStatus = {
    key: id,
    spec: resolved,
    capabilities: [...blackBox.capabilities],
    attention: {
      kind: "unreadable",
      reason: "transformers.js generation does not return decoder attention; use the ort backend",
    },
    choice,
    backend: "transformers",
    filesRead: log.read,
    fileHashes: log.hashes,
    fileBytes: log.sizes,
  };
  return modelStatus;
}

const api = {
  /**
   * Proves ONNX Runtime's WASM build loads and runs here, and says which
   * engine "auto" means: the one of the remembered `checks` measured for this
   * adapter, ONNX Runtime version and thread count; without one, the check
   * starts in the background (`engineCheck()` waits for it) and "auto" means
   * WASM meanwhile.
   */
  async status(checks: readonly EngineCheck[] = []): Promise<RuntimeStatus> {
    // Kept before the first await: a load that arrives meanwhile decides by these.
    remembered = checks;
    const url = new URL(`${import.meta.env.BASE_URL}selftest/double.onnx`, self.location.origin);
    const session = await ort.InferenceSession.create(url.href, { executionProviders: ["wasm"] });
    let selfTest: number[];
    try {
      const x = new ort.Tensor("float32", Float32Array.from([1, 2]), [2]);
      const { y } = await session.run({ x });
      selfTest = Array.from(y!.data as Float32Array);
    } finally {
      await session.release();
    }
    const check = await recallEngine();
    if (!check) void checkEngine().catch(() => undefined); // engineCheck() reports the failure
    return {
      choice: check ? choiceOf(check) : PROVISIONAL,
      ...(check ? { check } : {}),
      ort: {
        version: ort.env.versions.web ?? "unknown",
        wasmPaths: String(ort.env.wasm.wasmPaths),
        threads: ort.env.wasm.numThreads ?? 1,
        crossOriginIsolated: self.crossOriginIsolated,
        selfTest,
      },
    };
  },

  /** The engine check "auto" goes by: the one in hand, or the one running (started if none is). */
  async engineCheck(): Promise<EngineCheck> {
    return (await recallEngine()) ?? checkEngine();
  },

  /** Runs the engine check again (the "Measure again" button); later "auto" loads use the new choice. */
  async measureEngines(): Promise<EngineCheck> {
    return checkEngine({ force: true });
  },

  /**
   * Loads one model (replacing any loaded one) on the engine `options.device`
   * names ("auto": the measured one); a WebGPU failure under "auto" falls back
   * to WASM with the reason kept in the status. What `options.want` needs is
   * negotiated before any weight is read.
   */
  async load(
    source: ModelSource,
    options: WorkerLoadOptions = {},
    onProgress?: (p: LoadProgress) => void,
  ): Promise<ModelStatus> {
    await api.dispose();
    const hub = normalizeHub(options.hub ?? DEFAULT_HUB);
    let lastProgress: unknown;
    const report = onProgress ? (p: LoadProgress) => void (lastProgress = onProgress(p)) : undefined;
    // A file's bytes are reported at most every 100 ms (and when it is done): a big download is thousands of chunks.
    const sentAt = new Map<string, number>();
    const onFile = report
      ? (file: FileProgress) => {
          const now = performance.now();
          if (!file.done && now - (sentAt.get(file.path) ?? -Infinity) < 100) return;
          sentAt.set(file.path, now);
          report({ stage: `reading ${file.path}`, done: file.loaded, total: file.total ?? 0, file });
        }
      : undefined;
    if (options.backend === "transformers") {
      const status = await loadTransformers(source, options, hub, onFile);
      await Promise.resolve(lastProgress).catch(() => undefined);
      return status;
    }
    const log = newReadLog();
    const { files, key, where, spec } = sourceFiles(source, log, hub, onFile, await hubListing(source, hub));
    const want = options.want ?? [];
    // Negotiated before any session: on a registered spec, else on the graphs' protobufs (planModel), whose
    // reading the load then reuses.
    const plan = want.length && !spec ? await planModel(files, { key, source: where }) : undefined;
    if (want.length) {
      const why = plan?.inspection.attention.reason;
      const provided = spec ? spec.capabilities : new Set(plan!.inspection.capabilities);
      negotiate(want, provided, `the ort backend for ${key}${why ? ` (${why})` : ""}`);
    }
    let choice = await decideDevice(options.device);
    const open = (device: "webgpu" | "wasm") =>
      cancellable((signal) =>
        loadOrtModel(files, webSessions(device, { memo: options.memo ?? true }), {
          ...(spec ? { spec } : {}),
          ...(plan ? { plan } : {}),
          key,
          source: where,
          signal,
          ...(report ? { onProgress: report } : {}),
        }),
      );
    let loaded: OrtModel;
    try {
      loaded = await open(choice.device);
    } catch (error) {
      if (choice.device !== "webgpu" || options.device === "webgpu") throw error;
      choice = { device: "wasm", reason: `WebGPU failed to run this model (${(error as Error).message}); using WASM` };
      loaded = await open("wasm");
    }
    const lacking = want.filter((c) => !loaded.capabilities.has(c));
    if (lacking.length) {
      const why = "reason" in loaded.attention ? `: ${String(loaded.attention.reason)}` : "";
      await loaded.dispose();
      throw new CapabilityError(lacking, [...loaded.capabilities], `${key} as loaded${why}`);
    }
    // The page's progress callback runs over its own channel: let the last report arrive before the result.
    await Promise.resolve(lastProgress).catch(() => undefined);
    model = loaded;
    const again = sourceFiles(source, newReadLog(), hub).files;
    modelL4 = pageL4(loaded, again, [...new Set([...log.read, ...loaded.spec.files])]);
    const bytes = Object.values(log.sizes).reduce((a, b) => a + b, 0);
    modelCopy =
      choice.device === "wasm" && (navigator.hardwareConcurrency || 1) >= 2 && bytes <= COPY_MAX_BYTES
        ? new SharedCopy((onDeath) =>
            startModelHelper({ files: again, spec: loaded.spec, key, source: where }, onDeath),
          )
        : undefined;
    modelStatus = {
      key,
      spec: loaded.spec,
      capabilities: [...loaded.capabilities],
      attention: loaded.attention,
      attentionStatus: loaded.attentionStatus,
      choice,
      backend: "ort",
      filesRead: log.read,
      fileHashes: log.hashes,
      fileBytes: log.sizes,
    };
    // On WASM only: a call there is milliseconds. On WebGPU one step can take seconds on a software adapter, and a
    // real call would wait for it.
    if (choice.device === "wasm") warming = warmUp(loaded);
    return modelStatus;
  },

  /**
   * What a model is and what the white-box runtime can read from it — spec,
   * files and sizes, capabilities, attention status, missing files — from its
   * config files and ONNX protobufs alone: no session is created. Hub files
   * read go into the hub cache (a later load reads them from there).
   */
  async inspect(source: ModelSource, options: { readonly hub?: string } = {}): Promise<ModelInspection> {
    const hub = normalizeHub(options.hub ?? DEFAULT_HUB);
    const { files, key, where, spec } = sourceFiles(
      source,
      newReadLog(),
      hub,
      undefined,
      await hubListing(source, hub),
    );
    return inspectModel(files, { key, source: where, ...(spec ? { spec } : {}) });
  },

  /** The loaded model's status, or undefined. */
  modelStatus(): ModelStatus | undefined {
    return modelStatus;
  },

  /** The hub models whose files this browser keeps for hub address `hub`, with their sizes. */
  async cachedHubModels(hub: string = DEFAULT_HUB): Promise<CachedHubModel[]> {
    const prefix = `${normalizeHub(hub)}/`;
    const byId = new Map<string, { path: string; bytes: number }[]>();
    for (const file of await cachedFiles(HUB_CACHE, prefix)) {
      const parsed = parseHubUrl(hub, `${prefix}${file.path}`);
      if (!parsed) continue;
      const list = byId.get(parsed.id) ?? [];
      list.push({ path: parsed.path, bytes: file.bytes });
      byId.set(parsed.id, list);
    }
    return [...byId].map(([id, files]) => ({ id, files, bytes: files.reduce((sum, f) => sum + f.bytes, 0) }));
  },

  /** Forgets every kept file (and kept 404) of hub model `id` at hub address `hub`; the next load downloads again. */
  async forgetHubModel(id: string, hub: string = DEFAULT_HUB): Promise<number> {
    const prefix = `${normalizeHub(hub)}/${id}/`;
    const cache = await caches.open(HUB_CACHE);
    let removed = 0;
    for (const request of await cache.keys())
      if (request.url.startsWith(prefix) && (await cache.delete(request))) removed++;
    return removed;
  },

  /** Generates an answer (greedy by default; seeded sampling with `temperature`). */
  async generate(input: ModelInput, options: Omit<OrtGenerateOptions, "signal"> = {}): Promise<Generation> {
    await endWarmUp();
    if (blackBox) {
      const ids = await blackBox.generateIds(input, options);
      // transformers.js does not say why it stopped nor how long the prompt was: -1 = unknown.
      return { text: blackBox.decode(ids), ids, promptLength: -1, stop: "eos" };
    }
    const m = requireModel();
    return cancellable((signal) => m.generateTokens(input, { ...options, signal }));
  },

  /** One teacher-forced forward returning the asked reductions as small typed arrays (moved to the page, not copied). */
  async forward(input: ModelInput, capture: Omit<CaptureOptions, "signal"> = {}): Promise<Trace> {
    await endWarmUp();
    if (blackBox) return blackBox.forward(input, capture);
    const m = requireModel();
    const trace = await cancellable((signal) => m.forward(input, { ...capture, signal }));
    return transfer(trace, traceBuffers(trace));
  },

  /**
   * Runs (or resumes) an eval of the loaded model inside this worker, writing
   * every judged item to IndexedDB as it goes; progress comes back at most
   * every 250 ms (`progressEveryMs`). `cancelEval(runId)` stops it, keeping what was judged.
   */
  async runEval(request: EvalJobRequest, onProgress?: (p: EvalJobProgress) => void): Promise<EvalJobResult> {
    await endWarmUp();
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
        250,
        model === loaded ? modelCopy : undefined,
      );
      await Promise.resolve(lastProgress).catch(() => undefined);
      return result;
    } finally {
      endJob(controller);
    }
  },

  /** Stops the eval of `runId` running in this worker (what was judged is kept; it can be resumed). */
  cancelEval(runId: string): boolean {
    const controller = jobs.get(runId);
    controller?.abort();
    return !!controller;
  },

  /**
   * Runs (or resumes) an investigation (M1→M5) of the loaded model inside this
   * worker, its events stored in IndexedDB as they are logged; the events and
   * progress counts come back at most every 100 ms. `cancelInvestigation(runId)`
   * stops it, keeping every label, probe and repair run stored so far.
   */
  async runInvestigation(
    request: InvestigateJobRequest,
    onUpdate?: (update: InvestigationUpdate) => void,
  ): Promise<InvestigateJobResult> {
    await endWarmUp();
    const loaded: Model | undefined = model ?? blackBox;
    if (!loaded || !modelStatus)
      throw new Error("no model is loaded in this worker: load one before starting an investigation");
    const key = request.resume ?? request.runId;
    if (key !== undefined && jobs.has(key)) throw new Error(`investigation '${key}' is already running in this worker`);
    const controller = new AbortController();
    jobs.set(key ?? `investigation-${jobs.size}-${Date.now()}`, controller);
    let lastUpdate: unknown;
    try {
      const result = await runInvestigationJob(
        request,
        loaded,
        investigationModelInfo(modelStatus, getSpec(modelStatus.key)?.source),
        controller.signal,
        (update) => {
          if (!jobs.has(update.runId)) jobs.set(update.runId, controller);
          if (onUpdate) lastUpdate = onUpdate(update);
        },
        100,
        judgeModel,
        model === loaded ? modelL4 : undefined,
        model === loaded ? modelCopy : undefined,
      );
      await Promise.resolve(lastUpdate).catch(() => undefined);
      return result;
    } finally {
      endJob(controller);
    }
  },

  /** Stops the investigation `runId` running in this worker (what it stored is kept; it can be resumed). */
  cancelInvestigation(runId: string): boolean {
    const controller = jobs.get(runId);
    controller?.abort();
    return !!controller;
  },

  /** The stored investigation's report as the CLI writes it: report.json and the self-contained report.html. */
  async investigationReport(db: string, runId: string): Promise<{ json: string; html: string }> {
    return investigationReportFiles(db, runId);
  },

  /**
   * The playground's explanation of one answer (see `workers/explain.ts`):
   * the answer, per-token entropy / margin / top-k, image heatmaps per layer ×
   * head, rollout and the logit lens, optionally under an intervention. The
   * full attention stays in this worker (`attentionMatrix`); `cancel()` stops it.
   */
  async explain(request: ExplainRequest): Promise<Explanation> {
    await endWarmUp();
    if (blackBox && !model)
      throw new Error(
        "the playground reads the model's internals: load the model with the white-box runtime (ort backend), not transformers.js",
      );
    const m = requireModel();
    const image =
      request.image instanceof Uint8Array && !isPng(request.image) ? await browserPixels(request.image) : undefined;
    const out = await cancellable((signal) => explain(m, image ? { ...request, image } : request, signal));
    const buffers = [out.answerMaps, out.lastMaps, out.rollout]
      .filter(
        (a): a is Float32Array =>
          a !== undefined && a.buffer instanceof ArrayBuffer && a.byteLength === a.buffer.byteLength,
      )
      .map((a) => a.buffer as ArrayBuffer);
    return transfer(out, buffers);
  },

  /** One layer × head (0-based) of a kept explanation's full attention: a `size × size` matrix, moved to the page. */
  attentionMatrix(id: number, layer: number, head: number): { size: number; data: Float32Array } {
    const matrix = keptMatrix(id, layer, head);
    return transfer(matrix, [matrix.data.buffer as ArrayBuffer]);
  },

  /** Cancels the call in flight (it rejects with "… was cancelled"). */
  cancel(): void {
    current?.abort();
  },

  /** Releases the loaded model's sessions. */
  async dispose(): Promise<void> {
    await endWarmUp();
    current?.abort();
    for (const controller of jobs.values()) controller.abort();
    const m = model;
    const b = blackBox;
    const copy = modelCopy;
    model = undefined;
    modelL4 = undefined;
    modelCopy = undefined;
    blackBox = undefined;
    modelStatus = undefined;
    await Promise.all([m?.dispose(), b?.dispose(), copy?.close()]);
  },
};

/**
 * The calls that load or run a model, each one gate work: the engine check's next step waits for them, and
 * they wait for its step in flight. `cancel` and the job cancels are not among them: they must reach a call
 * in flight.
 */
const GATED = ["load", "generate", "forward", "explain", "runEval", "runInvestigation", "dispose"] as const;
for (const name of GATED) {
  const call = api[name] as (...args: unknown[]) => Promise<unknown>;
  (api as Record<string, unknown>)[name] = (...args: unknown[]) => gate.work(() => call.apply(api, args));
}

export type ModelWorkerApi = typeof api;
expose(api);
