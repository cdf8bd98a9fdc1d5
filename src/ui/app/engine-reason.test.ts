import { describe, expect, it } from "vitest";
import { engineReason, softwareAdapter, softwareAdapterProblem } from "./engine-reason.ts";

describe("engineReason", () => {
  const provisional = { device: "wasm", reason: "WASM for now", provisional: true } as const;
  it("keeps the load's reason while the check has not decided, or when the engine was chosen", () => {
    expect(engineReason(provisional, undefined)).toBe("WASM for now");
    expect(engineReason(provisional, provisional)).toBe("WASM for now");
    expect(engineReason({ device: "wasm", reason: "chosen in Settings" }, { device: "webgpu", reason: "faster" })).toBe(
      "chosen in Settings",
    );
  });
  it("gives the check's reason once it decided the same engine", () => {
    expect(engineReason(provisional, { device: "wasm", reason: "WASM is faster here" })).toBe("WASM is faster here");
  });
  it("says to load again when the check chose another engine", () => {
    expect(engineReason(provisional, { device: "webgpu", reason: "WebGPU is faster here" })).toBe(
      "loaded on WASM before the engine check finished; the check now chooses WebGPU (WebGPU is faster here): load the model again to use it",
    );
  });
});

describe("softwareAdapter", () => {
  it("names a fallback adapter, or one whose name is a known CPU rasteriser", () => {
    // What headless Chromium without a GPU gives (GPUAdapter.info, measured here).
    expect(
      softwareAdapter({ vendor: "google", architecture: "swiftshader", description: "", isFallbackAdapter: true }),
    ).toBe("google swiftshader");
    expect(softwareAdapter({ vendor: "mesa", description: "llvmpipe (LLVM 15.0.6, 256 bits)" })).toBe(
      "mesa llvmpipe (LLVM 15.0.6, 256 bits)",
    );
    expect(softwareAdapter({ description: "Microsoft Basic Render Driver" })).toBe("Microsoft Basic Render Driver");
    expect(softwareAdapter({ isFallbackAdapter: true })).toBe("a fallback adapter");
  });
  it("leaves a hardware adapter (and one that says nothing of itself) to be measured", () => {
    expect(softwareAdapter({ vendor: "nvidia", architecture: "ampere", isFallbackAdapter: false })).toBeUndefined();
    expect(softwareAdapter({ vendor: "apple", architecture: "metal-3" })).toBeUndefined();
    expect(softwareAdapter({})).toBeUndefined();
    expect(softwareAdapter(undefined)).toBeUndefined();
  });
  it("says why WebGPU was left out and how to have it anyway", () => {
    const problem = softwareAdapterProblem("google swiftshader");
    expect(problem).toContain(
      "software (google swiftshader, drawn on the CPU, where WebGPU runs slower than WASM as a rule)",
    );
    expect(problem).toContain("WebGPU build was not downloaded");
    expect(problem).toContain("Measure again");
  });
});
