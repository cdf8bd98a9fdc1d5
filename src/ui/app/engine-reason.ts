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
