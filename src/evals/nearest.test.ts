import { describe, expect, it } from "vitest";
import { nearest } from "./nearest.ts";

describe("nearest", () => {
  it("finds the known name a typo meant", () => {
    expect(nearest("repeat", ["repeats", "cluster"])).toBe("repeats");
    expect(nearest("clsuter", ["repeats", "cluster"])).toBe("cluster");
    expect(nearest("Tolerence", ["tolerance", "threshold"])).toBe("tolerance");
    expect(nearest("sampel", ["split", "tags", "ids", "sample", "includeArchived"])).toBe("sample");
  });
  it("suggests nothing for a word far from every name", () => {
    expect(nearest("zzz", ["repeats", "cluster"])).toBeUndefined();
    expect(nearest("x", ["id", "ids"])).toBeUndefined();
    expect(nearest("anything", [])).toBeUndefined();
  });
});
