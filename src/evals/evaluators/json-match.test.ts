import { describe, expect, it } from "vitest";
import { jsonMatch } from "./json-match.ts";
import { ctx } from "./testing.ts";

describe("jsonMatch", () => {
  it("compares the named keys (dotted), parsing a string output", async () => {
    expect(await jsonMatch(["a"]).check(ctx('{"a":1,"b":2}', { a: 1, b: 3 }))).toEqual({ passed: true, score: 1 });
    expect(await jsonMatch(["x.y"]).check(ctx({ x: { y: [1, 2] } }, { x: { y: [1, 2] } }))).toEqual({
      passed: true,
      score: 1,
    });
  });
  it("compares every key of expected by default, scoring the share that agree", async () => {
    expect(await jsonMatch().check(ctx({ a: 1, b: 2 }, { a: 1, b: 3 }))).toEqual({
      passed: false,
      score: 0.5,
      reason: 'differs on ["b"]',
    });
  });
  it("an output that is not JSON fails with the reason; an expected that is not an object errors", async () => {
    expect(await jsonMatch().check(ctx("not json", { a: 1 }))).toEqual({
      passed: false,
      score: 0,
      reason: "the output is not JSON",
    });
    expect(() => jsonMatch().check(ctx("{}", "x"))).toThrow(/must be an object/);
  });
});
