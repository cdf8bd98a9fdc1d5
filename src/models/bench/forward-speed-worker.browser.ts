/// <reference lib="webworker" />
/**
 * The in-worker half of the forward-speed benchmark: the same runtime the
 * model worker uses (ONNX Runtime Web on WASM, the bundled tiny-vlm), timed
 * inside the worker, so the cost of crossing the worker boundary is what the
 * page's time minus this one leaves.
 */
import { loadOrtModel, type OrtModel } from "../ort-model.ts";
import { configureOrtWasm } from "../ort-env.browser.ts";
import { fetchFiles, webSessions } from "../ort-session.browser.ts";
import type { ModelInput } from "../../core/model.ts";

const ort = configureOrtWasm();
let model: OrtModel | undefined;

self.onmessage = async (event: MessageEvent<{ input: ModelInput; n: number }>) => {
  try {
    model ??= await loadOrtModel(
      fetchFiles(new URL(`${import.meta.env.BASE_URL}models/tiny-vlm/`, self.location.origin).href),
      webSessions("wasm"),
      { key: "tiny-vlm" },
    );
    const times: number[] = [];
    for (let i = 0; i < event.data.n; i++) {
      const start = performance.now();
      await model.forward(event.data.input, { answer: "yes" });
      times.push(performance.now() - start);
    }
    self.postMessage({
      times,
      setup: {
        threads: ort.env.wasm.numThreads ?? 1,
        crossOriginIsolated: self.crossOriginIsolated,
        ort: ort.env.versions.web ?? "unknown",
      },
    });
  } catch (error) {
    self.postMessage({ error: String((error as Error)?.message ?? error) });
  }
};
