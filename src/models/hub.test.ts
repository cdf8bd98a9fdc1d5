import { describe, expect, it } from "vitest";
import { DEFAULT_HUB, hubBase, isHubId, normalizeHub, parseHubUrl } from "./hub.ts";

describe("hub ids and URLs", () => {
  it("tells an owner/name id from anything else", () => {
    expect(isHubId("Xenova/tiny-random-LlamaForCausalLM")).toBe(true);
    expect(isHubId("evalrx/tiny-lm")).toBe(true);
    for (const bad of ["tiny-lm", "a/b/c", "../etc", "a/..", "https://huggingface.co/a/b", "a b/c", ""])
      expect(isHubId(bad), bad).toBe(false);
  });

  it("normalises a hub address and refuses one that is not an http(s) URL", () => {
    expect(normalizeHub("https://huggingface.co/")).toBe(DEFAULT_HUB);
    expect(normalizeHub(" http://127.0.0.1:8080 ")).toBe("http://127.0.0.1:8080");
    expect(normalizeHub("https://mirror.example/hf/")).toBe("https://mirror.example/hf");
    expect(() => normalizeHub("huggingface.co")).toThrow("hub address 'huggingface.co' is not a URL");
    expect(() => normalizeHub("ftp://x.example")).toThrow(/must start with https:\/\//);
    expect(() => normalizeHub("https://x.example/?a=1")).toThrow(/query/);
  });

  it("builds the resolve/main folder and reads it back", () => {
    const base = hubBase("http://127.0.0.1:9/", "evalrx/tiny-lm");
    expect(base).toBe("http://127.0.0.1:9/evalrx/tiny-lm/resolve/main/");
    expect(parseHubUrl("http://127.0.0.1:9", `${base}onnx/model.onnx`)).toEqual({
      id: "evalrx/tiny-lm",
      revision: "main",
      path: "onnx/model.onnx",
    });
    expect(parseHubUrl("http://127.0.0.1:9", "http://127.0.0.1:9/models/tiny-lm/config.json")).toBeUndefined();
    expect(parseHubUrl(DEFAULT_HUB, `${base}config.json`)).toBeUndefined();
    expect(() => hubBase(DEFAULT_HUB, "not an id")).toThrow("'not an id' is not a hub id");
  });
});
