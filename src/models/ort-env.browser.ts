import * as ort from "onnxruntime-web/webgpu";

/**
 * Points ONNX Runtime Web — and transformers.js, which shares the same
 * `ort.env` — at the wasm files the app serves under `<base>/ort/`, so nothing
 * is ever fetched from a CDN. Call once per realm before the first session.
 */
export function configureOrtWasm(base: string = import.meta.env.BASE_URL): typeof ort {
  const prefix = new URL(`${base.replace(/\/?$/, "/")}ort/`, self.location.origin).href;
  ort.env.wasm.wasmPaths = prefix;
  // Threads need cross-origin isolation; without it ORT would quietly run on one thread anyway.
  ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
  return ort;
}
