/// <reference lib="webworker" />
/**
 * The model worker's startup engine check: one reference forward of the
 * bundled tiny-lm on WASM and on WebGPU, the logits compared and both timed
 * after a warm-up, so the faster trusted engine is chosen by measurement on
 * this device. A software adapter (SwiftShader: the CPU drawing) is not
 * measured unless asked (it always loses to WASM, and measuring it downloads
 * ONNX Runtime's WebGPU build, 5 MB compressed).
 */
import {
  chooseBackend,
  decideEngine,
  type AdapterLike,
  type EngineCheck,
  type EngineRun,
  type GpuLike,
} from "../src/models/backend-choice.ts";
import { webSessions } from "../src/models/ort-session.browser.ts";
import { asFloat32, i64, type PlainTensor, type Session } from "../src/models/session.ts";
import { softwareAdapter, softwareAdapterProblem, type AdapterInfoLike } from "../src/ui/app/engine-reason.ts";

/** Token ids of the reference forward: fixed, inside tiny-lm's 16-token vocabulary, within its 64-token context. */
const REFERENCE_LENGTH = 48;
const WARMUP_RUNS = 1;
const TIMED_RUNS = 7;
/** An engine stops being timed once its timed runs add up to this (a software adapter takes ~0.6 s a forward). */
const TIME_BUDGET_MS = 1000;
export const REFERENCE = `the bundled tiny-lm over ${REFERENCE_LENGTH} fixed token ids (median of up to ${TIMED_RUNS} forwards, or ${TIME_BUDGET_MS / 1000} s, after ${WARMUP_RUNS} warm-up)`;

function referenceFeeds(session: Session): Record<string, PlainTensor> {
  const T = REFERENCE_LENGTH;
  const feeds: Record<string, PlainTensor> = {
    input_ids: i64(
      Array.from({ length: T }, (_, i) => 3 + ((i * 7) % 13)),
      [1, T],
    ),
    attention_mask: i64(new Array<number>(T).fill(1), [1, T]),
    position_ids: i64(
      Array.from({ length: T }, (_, i) => i),
      [1, T],
    ),
  };
  // An empty KV cache for each past input the graph takes ([1, heads, 0, headDim]; tiny-lm: 4 × 16).
  for (const name of session.inputNames)
    if (name.startsWith("past_key_values"))
      feeds[name] = { type: "float32", data: new Float32Array(0), dims: [1, 4, 0, 16] };
  return feeds;
}

/**
 * Runs one step of the check that touches ONNX Runtime (a session opened, one forward, the release): the
 * worker's `BackgroundGate.step`, which holds it while a load, an answer or a job is in flight.
 */
export type CheckStep = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * Times the reference forward on each session: warm-up runs, then timed runs
 * taken in turn (so both engines see the same machine state) until each has
 * `TIMED_RUNS` or has spent `TIME_BUDGET_MS`; the median time and the logits
 * of the last run of each. Each forward is one step, timed inside it.
 */
async function timeSessions(sessions: readonly Session[], step: CheckStep): Promise<EngineRun[]> {
  const feeds = sessions.map(referenceFeeds);
  const times = sessions.map((): number[] => []);
  const logits: Float32Array[] = sessions.map(() => new Float32Array(0));
  for (let i = 0; i < WARMUP_RUNS; i++)
    for (const [s, session] of sessions.entries()) await step(() => session.run(feeds[s]!, ["logits"]));
  const spent = sessions.map(() => 0);
  for (let i = 0; i < TIMED_RUNS; i++)
    for (const [s, session] of sessions.entries()) {
      if (spent[s]! >= TIME_BUDGET_MS) continue;
      const { ms, out } = await step(async () => {
        const start = performance.now();
        const out = await session.run(feeds[s]!, ["logits"]);
        return { ms: performance.now() - start, out };
      });
      times[s]!.push(ms);
      spent[s]! += ms;
      logits[s] = asFloat32(out.logits!);
    }
  return sessions.map((_, s) => {
    const sorted = times[s]!.sort((a, b) => a - b);
    return { ms: sorted[sorted.length >> 1]!, logits: logits[s]! };
  });
}

/** The bundled tiny-lm decoder, from the app's own `/models/`. */
async function referenceModel(): Promise<Uint8Array> {
  const url = new URL(`${import.meta.env.BASE_URL}models/tiny-lm/onnx/model.onnx`, self.location.origin);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the engine check could not fetch ${url.pathname}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

const open = (device: "wasm" | "webgpu", bytes: Uint8Array) =>
  webSessions(device)(bytes, { name: `onnx/model.onnx (engine check on ${device === "wasm" ? "WASM" : "WebGPU"})` });

/**
 * An adapter's info as plain values: GPUAdapterInfo's fields are getters on its prototype (a spread copies
 * none of them). Browsers before `GPUAdapterInfo.isFallbackAdapter` said it on the adapter itself.
 */
function adapterInfo(adapter: AdapterLike | null): AdapterInfoLike {
  const info = adapter?.info as AdapterInfoLike | undefined;
  const fallback =
    !!info?.isFallbackAdapter || !!(adapter as { isFallbackAdapter?: boolean } | null)?.isFallbackAdapter;
  return {
    ...(info?.vendor ? { vendor: info.vendor } : {}),
    ...(info?.architecture ? { architecture: info.architecture } : {}),
    ...(info?.description ? { description: info.description } : {}),
    ...(fallback ? { isFallbackAdapter: true } : {}),
  };
}

/** What `measureEngines` measures beyond WASM. */
export interface MeasureOptions {
  /**
   * Measure WebGPU on a software adapter too (the user's "Measure again"); by default such an adapter is
   * reported as the reason WebGPU was left out, and the WebGPU build is never fetched for it.
   */
  readonly software?: boolean;
}

/**
 * Measures WASM and WebGPU on the reference forward and decides. WebGPU that
 * is missing, a software adapter (unless `options.software`), or WebGPU that
 * throws is reported as the reason; WASM failing is an error (nothing could
 * run). Without a hardware adapter nothing of WebGPU's build is fetched.
 * `key` is what the result is remembered under.
 * Everything that touches ONNX Runtime runs through `step`: the worker holds
 * the check between steps while a load, an answer or a job is in flight (a
 * software adapter's forward takes seconds of both cores, a forward timed
 * beside a load measures the load, and the WebGPU build transformers.js
 * shares cannot initialise or run two things at once).
 *
 * @example
 * const check = await measureEngines(navigator.gpu, engineCheckKey({ adapter, ortVersion, threads }));
 * check.reason // → "WASM is faster here: 0.91 ms per forward against 38.2 ms on WebGPU (logits agree: …)"
 */
export async function measureEngines(
  gpu: GpuLike | undefined,
  key: string,
  step: CheckStep = (fn) => fn(),
  options: MeasureOptions = {},
): Promise<EngineCheck> {
  let found: AdapterLike | null = null;
  const seen: GpuLike | undefined = gpu && { requestAdapter: async () => (found = await gpu.requestAdapter()) };
  const adapterChoice = await chooseBackend(seen);
  const adapter = adapterChoice.device === "webgpu" ? adapterChoice.adapter : undefined;
  const software = adapter ? softwareAdapter(adapterInfo(found)) : undefined;
  const bytes = await referenceModel();
  const wasmSession = await step(() => open("wasm", bytes));
  let gpuSession: Session | undefined;
  let problem =
    adapterChoice.device !== "webgpu"
      ? adapterChoice.reason
      : software && !options.software
        ? softwareAdapterProblem(software)
        : undefined;
  const failed = (error: unknown) =>
    `WebGPU failed on the reference forward (${(error as Error)?.message || String(error)})`;
  try {
    if (!problem)
      try {
        gpuSession = await step(() => open("webgpu", bytes));
      } catch (error) {
        problem = failed(error);
      }
    let runs: EngineRun[];
    try {
      runs = await timeSessions(gpuSession ? [wasmSession, gpuSession] : [wasmSession], step);
    } catch (error) {
      // WASM alone must run; a WebGPU failure mid-run leaves WASM's numbers to measure again without it.
      if (!gpuSession) throw error;
      problem = failed(error);
      runs = await timeSessions([wasmSession], step);
    }
    const wasm = runs[0]!;
    const webgpu: EngineRun | { problem: string } = problem ? { problem } : runs[1]!;
    return decideEngine({
      key,
      reference: REFERENCE,
      measuredAt: new Date().toISOString(),
      wasm,
      webgpu,
      ...(adapter ? { adapter } : {}),
    });
  } finally {
    await step(() => Promise.all([wasmSession.release(), gpuSession?.release()]));
  }
}
