import { expect, it } from "vitest";
import { startModelWorker } from "../src/ui/runtime.ts";

it("the model worker chooses a backend and runs ONNX Runtime WASM from the app's own /ort/ files", async () => {
  const { api, worker } = startModelWorker();
  try {
    const status = await api.status();
    expect(["webgpu", "wasm"]).toContain(status.choice.device);
    expect(status.choice.reason.length).toBeGreaterThan(0);
    expect(status.ort.selfTest).toEqual([2, 4]);
    expect(new URL(status.ort.wasmPaths).origin).toBe(location.origin);
    expect(new URL(status.ort.wasmPaths).pathname).toMatch(/\/ort\/$/);
  } finally {
    worker.terminate();
  }
});
