/** Written in at build time (vite.config.ts `define`): the folder the app serves ONNX Runtime's wasm from. */
declare const __EVALRX_ORT_DIR__: string;

/**
 * Where, under the app's base URL, ONNX Runtime Web's wasm files are served: `ort/<12 hex>/`, a folder named by
 * a hash of those files, so the host may send them `immutable` and the browser may reuse the code it compiled
 * for them on the next visit. Imported by the page (which names the WebGPU build to keep offline) without
 * loading ONNX Runtime itself.
 *
 * @example `${import.meta.env.BASE_URL}${ORT_DIR}ort-wasm-simd-threaded.wasm` // "/ort/3f9c0a1b2d4e/ort-wasm-simd-threaded.wasm"
 */
export const ORT_DIR: string = __EVALRX_ORT_DIR__;
