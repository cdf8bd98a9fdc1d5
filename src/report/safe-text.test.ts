import { describe, expect, it } from "vitest";
import { neutralizeBidi } from "./safe-text.ts";

describe("neutralizeBidi", () => {
  it("makes every bidi control visible, in strings and keys, deep in objects and lists", () => {
    const report = { title: "ok", cases: [{ id: "abc\u202Edef", note: "\u2066x\u2069" }], ["k\u202E"]: 1, n: 3 };
    expect(neutralizeBidi(report)).toEqual({
      title: "ok",
      cases: [{ id: "abc[U+202E]def", note: "[U+2066]x[U+2069]" }],
      ["k[U+202E]"]: 1,
      n: 3,
    });
    expect(neutralizeBidi("\u200F\u061C")).toBe("[U+200F][U+061C]");
  });
  it("leaves text without them as it is (the same string), and keeps __proto__ a plain key", () => {
    const text = "ü 中文 שלום";
    expect(neutralizeBidi(text)).toBe(text);
    const out = neutralizeBidi(JSON.parse('{"__proto__": {"x": 1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toEqual({ x: 1 });
  });
});
