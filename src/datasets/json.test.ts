import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJson } from "./json.ts";

describe("parseJson", () => {
  it("reads NaN, Infinity and -Infinity as Python's json writes them, anywhere a number may be", () => {
    expect(parseJson('{"acc": NaN, "ppl": Infinity, "low": -Infinity, "xs": [1, NaN, -Infinity]}')).toEqual({
      acc: NaN,
      ppl: Infinity,
      low: -Infinity,
      xs: [1, NaN, -Infinity],
    });
    expect(parseJson("NaN")).toBeNaN();
    expect(parseJson("[Infinity]")).toEqual([Infinity]);
  });

  it("leaves the words inside strings alone, escaped quotes included", () => {
    expect(parseJson('{"a": "NaN", "b": "say \\"Infinity\\" NaN", "c": NaN}')).toEqual({
      a: "NaN",
      b: 'say "Infinity" NaN',
      c: NaN,
    });
  });

  it("a string that decodes to its internal marker stays a string", () => {
    const value = parseJson('{"s": "\\u0000NaN", "t": "\\u0000NaN0", "n": NaN}') as Record<string, unknown>;
    expect(value).toEqual({ s: "\u0000NaN", t: "\u0000NaN0", n: NaN });
  });

  it("still refuses what is not JSON, with JSON.parse's own message for the text as written", () => {
    let original = "";
    try {
      JSON.parse('{"a": NaN, "b": }');
    } catch (error) {
      original = (error as Error).message;
    }
    expect(() => parseJson('{"a": NaN, "b": }')).toThrow(original);
    expect(() => parseJson("{broken")).toThrow(SyntaxError);
    expect(() => parseJson('{"a": NaNa}')).toThrow(SyntaxError);
    expect(() => parseJson('{"a": nan}')).toThrow(SyntaxError);
  });

  it("agrees with JSON.parse on every JSON text", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it("keeps __proto__ as a key, as JSON.parse does", () => {
    const value = parseJson('{"__proto__": {"x": 1}, "v": NaN}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__", "v"]);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});
