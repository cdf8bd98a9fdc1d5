/** Which inference engine a page or worker runs on, and why. */
export interface BackendChoice {
  readonly device: "webgpu" | "wasm";
  readonly reason: string;
  /** The WebGPU adapter's vendor / architecture / description when one was found. */
  readonly adapter?: string;
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
