/** Which inference engine a page or worker runs on, and why. */
export interface BackendChoice {
  readonly device: "webgpu" | "wasm";
  readonly reason: string;
  /** The WebGPU adapter's vendor / architecture / description when one was found. */
  readonly adapter?: string;
  /** True for the stand-in used until the engine check has run (WASM, never an unmeasured WebGPU). */
  readonly provisional?: boolean;
}

/** The part of `navigator.gpu` the choice needs; absent when the browser has no WebGPU. */
export interface GpuLike {
  requestAdapter(): Promise<AdapterLike | null>;
}
export interface AdapterLike {
  readonly info?: { vendor?: string; architecture?: string; description?: string };
  readonly features?: { has(name: string): boolean };
}

/**
 * Should this context run models on WebGPU or on WASM? WebGPU when an adapter
 * can be had; WASM otherwise, with the reason it was not WebGPU.
 *
 * @example
 * await chooseBackend(undefined) // → { device: "wasm", reason: "this browser has no WebGPU (navigator.gpu is missing)" }
 */
export async function chooseBackend(gpu: GpuLike | undefined): Promise<BackendChoice> {
  if (!gpu) return { device: "wasm", reason: "this browser has no WebGPU (navigator.gpu is missing)" };
  let adapter: AdapterLike | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (error) {
    return { device: "wasm", reason: `WebGPU adapter request failed: ${String(error)}` };
  }
  if (!adapter) return { device: "wasm", reason: "WebGPU is present but no adapter was returned" };
  const info = adapter.info ?? {};
  const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ") || "unnamed adapter";
  const f16 = adapter.features?.has("shader-f16") ? "with shader-f16" : "without shader-f16";
  return { device: "webgpu", reason: `WebGPU adapter found: ${name} (${f16})`, adapter: name };
}

/**
 * How far WebGPU's logits may stray from WASM's for WebGPU to be trusted, as
 * a share of the largest |logit| of the reference forward (at least 1): 0.2%.
 * Float32 kernels that differ only in summation order and transcendental
 * approximations stay well inside it (SwiftShader: ~0.1%); a broken kernel or
 * half-precision accumulation lands far outside.
 */
export const ENGINE_RELATIVE_TOLERANCE = 2e-3;

/** One engine's reference forward: the median time of the timed runs and the logits of the last. */
export interface EngineRun {
  readonly ms: number;
  readonly logits: Float32Array;
}

/**
 * The startup engine check's result: which engine models run on, why, and
 * the numbers behind it. Remembered per `key`, so it runs once per adapter
 * and ONNX Runtime version.
 */
export interface EngineCheck {
  /** What it was measured for: the WebGPU adapter (or its absence), the ONNX Runtime version and WASM threads. */
  readonly key: string;
  readonly device: "webgpu" | "wasm";
  /** The choice in one sentence, with the numbers. */
  readonly reason: string;
  /** Median milliseconds per reference forward on WASM. */
  readonly wasmMs: number;
  /** Median milliseconds per reference forward on WebGPU, when it ran. */
  readonly webgpuMs?: number;
  /** Largest |WebGPU logit − WASM logit| over the reference forward, when WebGPU ran. */
  readonly maxAbsDelta?: number;
  /** The |Δlogit| above which WebGPU is not trusted (the relative tolerance times `logitScale`). */
  readonly tolerance: number;
  /** The largest |logit| of WASM's reference forward (at least 1): what the tolerance is relative to. */
  readonly logitScale: number;
  /** True when WebGPU ran and its logits agree with WASM's within `tolerance`. */
  readonly webgpuTrusted: boolean;
  /** Why WebGPU was not measured (no adapter) or failed to run. */
  readonly webgpuProblem?: string;
  /** The WebGPU adapter's name, when one was found. */
  readonly adapter?: string;
  /** What was run: the model and input of the reference forward. */
  readonly reference: string;
  /** When it was measured (ISO 8601). */
  readonly measuredAt: string;
}

/** What `decideEngine` weighs: WASM's run, and WebGPU's run or why there is none. */
export interface EngineEvidence {
  readonly key: string;
  readonly reference: string;
  readonly measuredAt: string;
  readonly wasm: EngineRun;
  /** WebGPU's run; or the reason it did not run (no adapter, or it threw). */
  readonly webgpu: EngineRun | { readonly problem: string };
  readonly adapter?: string;
  /** Share of the largest |logit| WebGPU may differ by (default `ENGINE_RELATIVE_TOLERANCE`). */
  readonly relativeTolerance?: number;
}

/**
 * How far apart are two engines' logits? The largest absolute difference;
 * Infinity when the lengths differ or either side has a non-finite value,
 * so a broken result is never mistaken for agreement.
 *
 * @example
 * maxAbsDifference(Float32Array.of(1, 2), Float32Array.of(1, 2.5)) // → 0.5
 */
export function maxAbsDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return Infinity;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    if (!Number.isFinite(d)) return Infinity;
    if (d > max) max = d;
  }
  return max;
}

/** Milliseconds as the reason prints them (library code: no UI formatters). */
function ms(x: number): string {
  return `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`;
}

function share(x: number): string {
  return `${Number((x * 100).toPrecision(2))}%`;
}

function delta(x: number): string {
  return Number.isFinite(x) ? x.toExponential(1) : "∞ (lengths differ or a value is not finite)";
}

/**
 * Which engine should models run on, given one reference forward on each?
 * WebGPU only when it ran, its logits agree with WASM's within the tolerance
 * (a share of the largest |logit|; a result that disagrees is not trusted,
 * however fast), and it was faster; otherwise WASM. The reason states the numbers.
 *
 * @example
 * const logits = Float32Array.of(0.5, -1, 3);
 * decideEngine({ key, reference, measuredAt, wasm: { ms: 1.2, logits }, webgpu: { ms: 48, logits } }).reason
 * // → "WASM is faster here: 1.20 ms per forward against 48.0 ms on WebGPU (logits agree: max |Δ| 0.0e+0 ≤ 6.0e-3, 0.2% of the largest |logit|)"
 */
export function decideEngine(evidence: EngineEvidence): EngineCheck {
  const relative = evidence.relativeTolerance ?? ENGINE_RELATIVE_TOLERANCE;
  if (!(relative > 0)) throw new RangeError(`decideEngine(): relativeTolerance must be above 0, got ${relative}`);
  if (!(evidence.wasm.ms >= 0)) throw new RangeError(`decideEngine(): wasm.ms must be ≥ 0, got ${evidence.wasm.ms}`);
  let logitScale = 1;
  for (const v of evidence.wasm.logits) {
    if (!Number.isFinite(v))
      throw new RangeError("decideEngine(): WASM's reference logits are not finite: the reference forward is broken");
    if (Math.abs(v) > logitScale) logitScale = Math.abs(v);
  }
  const tolerance = relative * logitScale;
  const base = {
    key: evidence.key,
    reference: evidence.reference,
    measuredAt: evidence.measuredAt,
    wasmMs: evidence.wasm.ms,
    tolerance,
    logitScale,
    ...(evidence.adapter ? { adapter: evidence.adapter } : {}),
  };
  if ("problem" in evidence.webgpu)
    return {
      ...base,
      device: "wasm",
      webgpuTrusted: false,
      webgpuProblem: evidence.webgpu.problem,
      reason: `WASM (${ms(evidence.wasm.ms)} per forward): ${evidence.webgpu.problem}`,
    };
  const webgpuMs = evidence.webgpu.ms;
  const maxAbsDelta = maxAbsDifference(evidence.webgpu.logits, evidence.wasm.logits);
  const measured = { ...base, webgpuMs, maxAbsDelta };
  if (!(maxAbsDelta <= tolerance))
    return {
      ...measured,
      device: "wasm",
      webgpuTrusted: false,
      reason: `WASM: WebGPU's logits differ from WASM's by up to ${delta(maxAbsDelta)} (tolerance ${delta(tolerance)}, ${share(relative)} of the largest |logit|), so its results are not trusted (${ms(webgpuMs)} per forward on WebGPU, ${ms(evidence.wasm.ms)} on WASM)`,
    };
  const agree = `logits agree: max |Δ| ${delta(maxAbsDelta)} ≤ ${delta(tolerance)}, ${share(relative)} of the largest |logit|`;
  if (webgpuMs < evidence.wasm.ms)
    return {
      ...measured,
      device: "webgpu",
      webgpuTrusted: true,
      reason: `WebGPU is faster here: ${ms(webgpuMs)} per forward against ${ms(evidence.wasm.ms)} on WASM (${agree})`,
    };
  return {
    ...measured,
    device: "wasm",
    webgpuTrusted: true,
    reason: `WASM is faster here: ${ms(evidence.wasm.ms)} per forward against ${ms(webgpuMs)} on WebGPU (${agree})`,
  };
}

/**
 * The key an engine check is remembered under: it holds for one WebGPU
 * adapter (or none), one ONNX Runtime version and one WASM thread count.
 *
 * @example
 * engineCheckKey({ adapter: "google swiftshader", ortVersion: "1.31.0", threads: 2 })
 * // → "google swiftshader · ONNX Runtime 1.31.0 · 2 WASM threads"
 */
export function engineCheckKey(what: { adapter?: string | undefined; ortVersion: string; threads: number }): string {
  const threads = `${what.threads} WASM thread${what.threads === 1 ? "" : "s"}`;
  return `${what.adapter ?? "no WebGPU adapter"} · ONNX Runtime ${what.ortVersion} · ${threads}`;
}

/**
 * How many WASM threads should ONNX Runtime get? None without cross-origin
 * isolation (no SharedArrayBuffer), else half the cores, at most 4 — ONNX
 * Runtime's own default, which leaves the page and the other workers a core.
 * Taking every core of a small machine costs more in thread hand-offs than it
 * gives on small graphs.
 *
 * @example wasmThreads(true, 8) // → 4
 */
export function wasmThreads(crossOriginIsolated: boolean, cores: number): number {
  if (!(cores >= 1)) return 1;
  return crossOriginIsolated ? Math.min(4, Math.ceil(cores / 2)) : 1;
}
