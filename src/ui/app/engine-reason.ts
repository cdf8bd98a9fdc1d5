import type { BackendChoice } from "../../models/backend-choice.ts";

const deviceName = (choice: BackendChoice) => (choice.device === "webgpu" ? "WebGPU" : "WASM");

/**
 * Why a loaded model runs where it does, as of now: a model loaded before the
 * engine check finished ran on WASM provisionally, and once the check has
 * decided, that provisional reason would be a stale answer.
 *
 * @example engineReason({ device: "wasm", reason: "WASM for now…", provisional: true },
 *   { device: "webgpu", reason: "WebGPU is faster here" })
 * // "loaded on WASM before the engine check finished; the check now chooses WebGPU (WebGPU is faster here): load the model again to use it"
 */
export function engineReason(loaded: BackendChoice, now: BackendChoice | undefined): string {
  if (!loaded.provisional || !now || now.provisional) return loaded.reason;
  if (now.device === loaded.device) return now.reason;
  return `loaded on ${deviceName(loaded)} before the engine check finished; the check now chooses ${deviceName(now)} (${now.reason}): load the model again to use it`;
}

/** What `softwareAdapter` reads of a WebGPU adapter (`GPUAdapter.info`, and the older `isFallbackAdapter`). */
export interface AdapterInfoLike {
  readonly vendor?: string;
  readonly architecture?: string;
  readonly description?: string;
  /** `GPUAdapterInfo.isFallbackAdapter`: true for the browser's software fallback (Chromium's SwiftShader). */
  readonly isFallbackAdapter?: boolean;
}

/** Adapters that draw on the CPU: Chromium's SwiftShader, Mesa's llvmpipe / lavapipe / softpipe, Windows' WARP. */
const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|basic render driver/i;

/**
 * Is this WebGPU adapter a software one (the CPU drawing, no GPU)? Its name when it is, else undefined. On
 * such an adapter a forward is tens of times slower than on WASM (SwiftShader: 15–45 s for the bundled VLM's
 * first answer against 4.5 s), so the startup engine check does not measure it and the WebGPU build of ONNX
 * Runtime (a 5 MB download) is not fetched for it.
 *
 * @example softwareAdapter({ vendor: "google", architecture: "swiftshader", isFallbackAdapter: true }) // "google swiftshader"
 * @example softwareAdapter({ vendor: "nvidia", architecture: "ampere" }) // undefined
 */
export function softwareAdapter(info: AdapterInfoLike | undefined): string | undefined {
  const name = [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(" ");
  if (!info?.isFallbackAdapter && !SOFTWARE_ADAPTER.test(name)) return undefined;
  return name || "a fallback adapter";
}

/**
 * Why the engine check left WebGPU out on a software adapter: the words `EngineCheck.webgpuProblem` (and so
 * the check's reason, shown wherever the engine choice is) carry.
 *
 * @example softwareAdapterProblem("google swiftshader")
 * // "the WebGPU adapter is software (google swiftshader, drawn on the CPU, where WebGPU runs slower than WASM as a rule), so it was not measured and ONNX Runtime's WebGPU build was not downloaded (Measure again measures it; WebGPU in Settings uses it)"
 */
export function softwareAdapterProblem(name: string): string {
  return `the WebGPU adapter is software (${name}, drawn on the CPU, where WebGPU runs slower than WASM as a rule), so it was not measured and ONNX Runtime's WebGPU build was not downloaded (Measure again measures it; WebGPU in Settings uses it)`;
}
