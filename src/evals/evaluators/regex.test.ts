import { describe, expect, it } from "vitest";
import { regex } from "./regex.ts";
import { ctx } from "./testing.ts";

describe("regex", () => {
  it("passes when the output matches", async () => {
    expect(await regex(/^(yes|no)\b/i).check(ctx("Yes, there is."))).toEqual({ passed: true });
    expect(await regex("^\\d+$").check(ctx("12a"))).toEqual({ passed: false, reason: "does not match /^\\d+$/" });
  });
  it("negates, and is stateless with a global flag", async () => {
    const refusal = regex(/sorry/i, undefined, { negate: true });
    expect((await refusal.check(ctx("Sorry, I cannot"))).passed).toBe(false);
    const g = regex(/a/g);
    expect((await g.check(ctx("a"))).passed).toBe(true);
    expect((await g.check(ctx("a"))).passed).toBe(true);
  });
  it("an invalid pattern is refused up front; versions follow the pattern", () => {
    expect(() => regex("(")).toThrow(/not a valid pattern/);
    expect(regex("a").version).not.toBe(regex("b").version);
    expect(regex("a", "i").version).not.toBe(regex("a").version);
  });
});
