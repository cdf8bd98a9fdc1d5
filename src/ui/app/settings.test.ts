import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, readSettings } from "./settings.svelte.ts";

describe("readSettings", () => {
  it("keeps valid fields and defaults the rest", () => {
    expect(readSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(readSettings("not json")).toEqual(DEFAULT_SETTINGS);
    expect(readSettings("[1,2]")).toEqual(DEFAULT_SETTINGS);
    expect(readSettings('{"device":"wasm","tolerance":7,"alpha":0.01}')).toEqual({
      device: "wasm",
      tolerance: 0.03,
      alpha: 0.01,
    });
    expect(readSettings('{"device":"cuda"}').device).toBe("auto");
  });
});
