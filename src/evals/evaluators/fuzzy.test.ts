import { describe, expect, it } from "vitest";
import { fuzzy, similarity } from "./fuzzy.ts";
import { ctx } from "./testing.ts";

describe("fuzzy", () => {
  it("similarity is 1 − Levenshtein / longer length", () => {
    expect(similarity("kitten", "sitting")).toBeCloseTo(1 - 3 / 7, 12);
    expect(similarity("", "")).toBe(1);
    expect(similarity("abc", "")).toBe(0);
    expect(similarity("abc", "abc")).toBe(1);
  });
  it("passes at the threshold, on normalised text", async () => {
    const r = await fuzzy(0.9).check(ctx("A red  circle", "a red circles"));
    expect(r.passed).toBe(true);
    expect(r.score).toBeCloseTo(1 - 1 / 13, 12);
    const low = await fuzzy(0.95).check(ctx("a red circle", "a red circles"));
    expect(low.passed).toBe(false);
    expect(low.reason).toMatch(/similarity 0\.923 < 0\.95/);
  });
  it("rejects a threshold outside [0, 1]", () => {
    expect(() => fuzzy(1.5)).toThrow(/not in \[0, 1\]/);
  });
});
