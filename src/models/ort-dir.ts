/** Written in at build time (vite.config.ts `define`): the folder the app serves ONNX Runtime's wasm from. */
declare const __EVALRX_ORT_DIR__: string | undefined;

/**
 * Where, under the app's base URL, ONNX Runtime Web's wasm files are served: `ort/<12 hex>/`, a folder named by
 * a hash of those files, so the host may send them `immutable` and the browser may reuse the code it compiled
 * for them on the next visit. Read when asked, not on import: Node imports this module (through the models'
 * index) without a Vite build, and never asks.
 *
 * @example `${import.meta.env.BASE_URL}${ortDir()}ort-wasm-simd-threaded.wasm` // "/ort/3f9c0a1b2d4e/ort-wasm-simd-threaded.wasm"
 */
export function ortDir(): string {
  if (typeof __EVALRX_ORT_DIR__ !== "string")
    throw new Error(
      "ortDir(): this code was not built by the app's Vite config, which names the folder of ONNX Runtime's wasm (define __EVALRX_ORT_DIR__ in vite.config.ts)",
    );
  return __EVALRX_ORT_DIR__;
}
