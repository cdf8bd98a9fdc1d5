import { describe, expect, it } from "vitest";
import {
  chooseBackend,
  wasmThreads,
  decideEngine,
  engineCheckKey,
  maxAbsDifference,
  type EngineEvidence,
} from "./backend-choice.ts";

describe("chooseBackend", () => {
  it("falls back to WASM without navigator.gpu, saying why", async () => {
    expect(await chooseBackend(undefined)).toEqual({
      device: "wasm",
      reason: "this browser has no WebGPU (navigator.gpu is missing)",
    });
  });

  it("falls back to WASM when no adapter is returned or the request throws", async () => {
    expect((await chooseBackend({ requestAdapter: async () => null })).device).toBe("wasm");
    const failed = await chooseBackend({
      requestAdapter: async () => {
        throw new Error("blocked");
      },
    });
    expect(failed).toMatchObject({ device: "wasm", reason: "WebGPU adapter request failed: Error: blocked" });
  });

  it("picks WebGPU and names the adapter when one exists", async () => {
    const choice = await chooseBackend({
      requestAdapter: async () => ({
        info: { vendor: "google", architecture: "swiftshader" },
        features: new Set<string>(),
      }),
    });
    expect(choice).toEqual({
      device: "webgpu",
      reason: "WebGPU adapter found: google swiftshader (without shader-f16)",
      adapter: "google swiftshader",
    });
  });
});

describe("maxAbsDifference", () => {
  it("is the largest absolute difference, and Infinity for a broken result", () => {
    expect(maxAbsDifference(Float32Array.of(1, 2, 3), Float32Array.of(1, 2.5, 2.75))).toBe(0.5);
    expect(maxAbsDifference([1, 2], [1])).toBe(Infinity);
    expect(maxAbsDifference([], [])).toBe(Infinity);
    expect(maxAbsDifference([1, NaN], [1, 2])).toBe(Infinity);
    expect(maxAbsDifference([1, Infinity], [1, Infinity])).toBe(Infinity);
  });
});

describe("decideEngine", () => {
  const logits = Float32Array.of(0.5, -1.25, 3);
  const base: Omit<EngineEvidence, "webgpu"> = {
    key: "k",
    reference: "tiny-lm, 48 token ids",
    measuredAt: "2026-12-01T00:00:00.000Z",
    wasm: { ms: 1.2, logits },
    adapter: "google swiftshader",
  };

  it("keeps WASM when WebGPU is slower, with both timings and the agreement in the reason", () => {
    const check = decideEngine({ ...base, webgpu: { ms: 48, logits: Float32Array.of(0.5, -1.25, 3.00001) } });
    expect(check).toMatchObject({ device: "wasm", wasmMs: 1.2, webgpuMs: 48, webgpuTrusted: true, logitScale: 3 });
    expect(check.tolerance).toBeCloseTo(6e-3, 12);
    expect(check.maxAbsDelta).toBeCloseTo(1e-5, 6);
    expect(check.reason).toBe(
      "WASM is faster here: 1.20 ms per forward against 48.0 ms on WebGPU (logits agree: max |Δ| 1.0e-5 ≤ 6.0e-3, 0.2% of the largest |logit|)",
    );
  });

  it("scales the tolerance with the logits, at least 1", () => {
    const small = Float32Array.of(0.1, -0.2);
    expect(decideEngine({ ...base, wasm: { ms: 1, logits: small }, webgpu: { ms: 2, logits: small } }).tolerance).toBe(
      2e-3,
    );
    const big = Float32Array.of(10, -20);
    const shifted = Float32Array.of(10.03, -20);
    const check = decideEngine({ ...base, wasm: { ms: 1, logits: big }, webgpu: { ms: 0.5, logits: shifted } });
    expect(check).toMatchObject({ logitScale: 20, device: "webgpu", webgpuTrusted: true });
  });

  it("takes WebGPU when it is faster and agrees", () => {
    const check = decideEngine({ ...base, webgpu: { ms: 0.4, logits } });
    expect(check.device).toBe("webgpu");
    expect(check.reason).toMatch(/^WebGPU is faster here: 0\.40 ms per forward against 1\.20 ms on WASM/);
  });

  it("does not trust a faster WebGPU whose logits disagree beyond the tolerance", () => {
    const check = decideEngine({ ...base, webgpu: { ms: 0.4, logits: Float32Array.of(0.5, -1.25, 3.5) } });
    expect(check).toMatchObject({ device: "wasm", webgpuTrusted: false, maxAbsDelta: 0.5 });
    expect(check.reason).toContain(
      "differ from WASM's by up to 5.0e-1 (tolerance 6.0e-3, 0.2% of the largest |logit|), so its results are not trusted",
    );
    const broken = decideEngine({ ...base, webgpu: { ms: 0.4, logits: Float32Array.of(NaN, 0, 0) } });
    expect(broken.device).toBe("wasm");
    expect(broken.reason).toContain("∞");
  });

  it("says why WebGPU did not run", () => {
    const check = decideEngine({
      ...base,
      webgpu: { problem: "this browser has no WebGPU (navigator.gpu is missing)" },
    });
    expect(check).toMatchObject({ device: "wasm", webgpuTrusted: false });
    expect(check.webgpuMs).toBeUndefined();
    expect(check.reason).toBe("WASM (1.20 ms per forward): this browser has no WebGPU (navigator.gpu is missing)");
  });

  it("refuses a tolerance or a timing that cannot be", () => {
    expect(() => decideEngine({ ...base, relativeTolerance: 0, webgpu: { ms: 1, logits } })).toThrow(
      /relativeTolerance must be above 0/,
    );
    expect(() =>
      decideEngine({ ...base, wasm: { ms: 1, logits: Float32Array.of(NaN) }, webgpu: { ms: 1, logits } }),
    ).toThrow(/not finite/);
    expect(() => decideEngine({ ...base, wasm: { ms: NaN, logits }, webgpu: { ms: 1, logits } })).toThrow(/wasm\.ms/);
  });
});

describe("engineCheckKey", () => {
  it("names the adapter, the ONNX Runtime version and the threads", () => {
    expect(engineCheckKey({ adapter: "google swiftshader", ortVersion: "1.31.0", threads: 2 })).toBe(
      "google swiftshader · ONNX Runtime 1.31.0 · 2 WASM threads",
    );
    expect(engineCheckKey({ ortVersion: "1.31.0", threads: 1 })).toBe(
      "no WebGPU adapter · ONNX Runtime 1.31.0 · 1 WASM thread",
    );
  });
});

describe("wasmThreads", () => {
  it("takes half the cores, at most 4, and one without cross-origin isolation", () => {
    expect([1, 2, 3, 4, 8, 16].map((cores) => wasmThreads(true, cores))).toEqual([1, 1, 2, 2, 4, 4]);
    expect(wasmThreads(false, 16)).toBe(1);
    expect(wasmThreads(true, NaN)).toBe(1);
  });
});
