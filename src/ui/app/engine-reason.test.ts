import { describe, expect, it } from "vitest";
import { engineReason } from "./engine-reason.ts";

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
