import { describe, expect, it } from "vitest";
import { exact } from "./exact.ts";
import { ctx } from "./testing.ts";

describe("exact", () => {
  it("compares output and expected, key order aside", async () => {
    expect(await exact().check(ctx("yes", "yes"))).toEqual({ passed: true });
    expect(await exact().check(ctx({ b: 1, a: 2 }, { a: 2, b: 1 }))).toEqual({ passed: true });
    expect(await exact().check(ctx("Yes", "yes"))).toEqual({ passed: false, reason: 'got "Yes", expected "yes"' });
  });
  it("reads a dotted field of the output and of an object expected", async () => {
    expect((await exact("a.b").check(ctx({ a: { b: 3 } }, 3))).passed).toBe(true);
    expect((await exact("label").check(ctx({ label: "cat" }, { label: "dog" }))).passed).toBe(false);
  });
  it("normalizes case and whitespace when asked", async () => {
    expect((await exact(undefined, { normalize: true }).check(ctx("  Yes \n", "yes"))).passed).toBe(true);
  });
  it("throws (an errored check) when the case has no expected value", () => {
    expect(() => exact().check(ctx("x"))).toThrow(/no expected value/);
  });
  it("versions differ with parameters and are stable", () => {
    expect(exact().version).toMatch(/^[0-9a-f]{12}$/);
    expect(exact().version).toBe(exact().version);
    expect(exact("a").version).not.toBe(exact().version);
  });
});
