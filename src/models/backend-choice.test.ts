import { describe, expect, it } from "vitest";
import { chooseBackend } from "./backend-choice.ts";

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
