import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, readSettings, Settings } from "./settings.svelte.ts";

describe("readSettings", () => {
  it("keeps valid fields and defaults the rest", () => {
    expect(readSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(readSettings("not json")).toEqual(DEFAULT_SETTINGS);
    expect(readSettings("[1,2]")).toEqual(DEFAULT_SETTINGS);
    expect(readSettings('{"device":"wasm","tolerance":7,"alpha":0.01}')).toEqual({
      device: "wasm",
      tolerance: 0.03,
      alpha: 0.01,
      hub: "https://huggingface.co",
    });
    expect(readSettings('{"device":"cuda"}').device).toBe("auto");
    expect(readSettings('{"hub":"http://127.0.0.1:8080/"}').hub).toBe("http://127.0.0.1:8080");
    expect(readSettings('{"hub":"not a url"}').hub).toBe("https://huggingface.co");
  });
});

describe("Settings.update", () => {
  it("normalises and remembers the hub address, and refuses one that is not an http(s) URL, changing nothing", () => {
    const stored = new Map<string, string>();
    const storage = {
      getItem: (k: string) => stored.get(k) ?? null,
      setItem: (k: string, v: string) => void stored.set(k, v),
    };
    const settings = new Settings(storage);
    settings.update({ hub: "http://127.0.0.1:8080/" });
    expect(settings.hub).toBe("http://127.0.0.1:8080");
    expect(new Settings(storage).hub).toBe("http://127.0.0.1:8080");
    expect(() => settings.update({ hub: "ftp://mirror.example" })).toThrow(
      "hub address 'ftp://mirror.example' must start with https://",
    );
    expect(settings.hub).toBe("http://127.0.0.1:8080");
  });
});
