import { describe, expect, it } from "vitest";
import { defineEvaluator, runChecks } from "./evaluator.ts";
import { contains } from "./evaluators/contains.ts";
import { ctx } from "./evaluators/testing.ts";

describe("defineEvaluator / runChecks", () => {
  it("hashes name, parameters and source when no version is declared", () => {
    const check = () => ({ passed: true });
    const a = defineEvaluator({ name: "x", parameters: { k: 1 }, check });
    const b = defineEvaluator({ name: "x", parameters: { k: 2 }, check });
    const c = defineEvaluator({ name: "x", parameters: { k: 1 }, check: () => ({ passed: false }) });
    expect(a.version).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set([a.version, b.version, c.version]).size).toBe(3);
    expect(defineEvaluator({ name: "x", version: "v7", check }).version).toBe("v7");
  });
  it("refuses bad names", () => {
    expect(() => defineEvaluator({ name: "pass", check: () => ({ passed: true }) })).toThrow(/overall metric/);
    expect(() => defineEvaluator({ name: "a b", check: () => ({ passed: true }) })).toThrow(/not a metric name/);
  });
  it("a broken evaluator is errored with its message; the others still run", async () => {
    const broken = defineEvaluator({
      name: "broken",
      check: () => {
        throw new Error("boom");
      },
    });
    const liar = defineEvaluator({ name: "liar", check: () => ({ passed: "yes" }) as never });
    const out = await runChecks([broken, contains("red"), liar], ctx("a red circle"));
    expect(out.map((o) => [o.name, o.passed, o.errored])).toEqual([
      ["broken", false, true],
      ["contains", true, false],
      ["liar", false, true],
    ]);
    expect(out[0]!.error).toBe("boom");
    expect(out[2]!.error).toMatch(/expected \{ passed: boolean/);
  });
});
