import * as ortWasm from "onnxruntime-web/wasm";
import * as ortWebgpu from "onnxruntime-web/webgpu";
import { wasmThreads } from "./backend-choice.ts";
import { ortDir } from "./ort-dir.ts";

/** ONNX Runtime Web's builds as this app uses them: the plain WASM build for the CPU, the WebGPU one for the GPU. */
export const ORT_BUILDS = { wasm: ortWasm, webgpu: ortWebgpu } as const;

/**
 * Points both ONNX Runtime Web builds — and transformers.js, which shares the
 * WebGPU build's `ort.env` — at the wasm files the app serves under
 * `<base>/ort/<hash>/` (`ortDir()`), so nothing is ever fetched from a CDN; sets the threads and
 * keeps sessions in this worker (no proxy worker: this is one already). Call
 * once per realm before the first session. Returns the WASM build.
 */
export function configureOrtWasm(base: string = import.meta.env.BASE_URL): typeof ortWasm {
  const prefix = new URL(`${base.replace(/\/?$/, "/")}${ortDir()}`, self.location.origin).href;
  const threads = wasmThreads(self.crossOriginIsolated, navigator.hardwareConcurrency || 1);
  for (const ort of [ortWasm, ortWebgpu]) {
    ort.env.wasm.wasmPaths = prefix;
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.proxy = false;
  }
  return ortWasm;
}
