/// <reference lib="webworker" />
import { expose } from "comlink";
import { chooseBackend, type BackendChoice, type GpuLike } from "../src/models/backend-choice.ts";
import { configureOrtWasm } from "../src/models/ort-env.browser.ts";

/** What the page learns when the model worker starts: the engine it will use and a WASM self-test. */
export interface RuntimeStatus {
  readonly choice: BackendChoice;
  readonly ort: {
    readonly version: string;
    readonly wasmPaths: string;
    readonly threads: number;
    readonly crossOriginIsolated: boolean;
    /** `double.onnx` run on the WASM backend: [1, 2] → [2, 4]. */
    readonly selfTest: readonly number[];
  };
}

const ort = configureOrtWasm();

const api = {
  /** Chooses the backend and proves ONNX Runtime's WASM build loads and runs here. */
  async status(): Promise<RuntimeStatus> {
    const gpu = (navigator as Navigator & { gpu?: GpuLike }).gpu;
    const choice = await chooseBackend(gpu);
    const url = new URL(`${import.meta.env.BASE_URL}selftest/double.onnx`, self.location.origin);
    const session = await ort.InferenceSession.create(url.href, { executionProviders: ["wasm"] });
    try {
      const x = new ort.Tensor("float32", Float32Array.from([1, 2]), [2]);
      const { y } = await session.run({ x });
      return {
        choice,
        ort: {
          version: ort.env.versions.web ?? "unknown",
          wasmPaths: String(ort.env.wasm.wasmPaths),
          threads: ort.env.wasm.numThreads ?? 1,
          crossOriginIsolated: self.crossOriginIsolated,
          selfTest: Array.from(y!.data as Float32Array),
        },
      };
    } finally {
      await session.release();
    }
  },
};

export type ModelWorkerApi = typeof api;
expose(api);
