import { describe, expect, it } from "vitest";
import { contains } from "./contains.ts";
import { ctx } from "./testing.ts";

describe("contains", () => {
  it("passes when every needle is there, with the share found as score", async () => {
    expect(await contains("red", "circle").check(ctx("A Red circle"))).toEqual({ passed: true, score: 1 });
    expect(await contains("red", "square").check(ctx("a red circle"))).toEqual({
      passed: false,
      score: 0.5,
      reason: 'missing ["square"]',
    });
  });
  it("is case-sensitive when asked", async () => {
    expect((await contains("Red", { caseSensitive: true }).check(ctx("red"))).passed).toBe(false);
  });
  it("falls back to expected (string or list)", async () => {
    expect((await contains().check(ctx("a red circle", "circle"))).passed).toBe(true);
    expect((await contains().check(ctx("a red circle", ["red", "blue"]))).passed).toBe(false);
    expect(() => contains().check(ctx("x", 3))).toThrow(/no needles/);
  });
  it("contains('a') and contains('b') are different versions", () => {
    expect(contains("a").version).not.toBe(contains("b").version);
    expect(contains("a").version).toBe(contains("a").version);
  });
});
