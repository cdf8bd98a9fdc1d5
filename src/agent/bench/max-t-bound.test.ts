import { describe, expect, it } from "vitest";
import { maxTBound } from "./max-t-bound.ts";
import { syntheticLog } from "./synthetic.ts";

const failed = (r: Readonly<Record<string, unknown>>) => r.passed === false;

describe("maxTBound", () => {
  it("holds the family-wise error on null logs: about α of them reject any column", () => {
    let any = 0;
    const runs = 120;
    for (let seed = 1; seed <= runs; seed++) {
      const log = syntheticLog({ seed, n: 200, effect: 0 });
      if (maxTBound(log.rows, failed, log.noise, { permutations: 99, seed }).rejected.length) any++;
    }
    // α = 0.05: 6 of 120 expected; a per-column test at α (no max) rejects in about half of them.
    expect(any / runs).toBeLessThan(0.12);
  });

  it("finds a strong planted factor and gives it its direction", () => {
    const log = syntheticLog({ seed: 4, n: 600, planted: "binary", effect: 0.3 });
    const result = maxTBound(log.rows, failed, ["planted", ...log.noise], { permutations: 199 });
    expect(result.rejected).toEqual(["planted"]);
    expect(result.sign.get("planted")).toBe(1);
    expect(result.adjustedP.get("planted")).toBe(1 / 200);
  });

  it("gives a categorical column a z from its χ² and skips constant columns", () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({
      colour: ["red", "green", "blue"][i % 3]!,
      same: 1,
      passed: i % 3 !== 0 || i % 2 === 0,
    }));
    const result = maxTBound(rows, failed, ["colour", "same"], { permutations: 99 });
    expect(result.z.get("colour")).toBeGreaterThan(2);
    expect(result.z.has("same")).toBe(false);
  });

  it("says which column and row are wrong", () => {
    const rows = [
      { a: 1, passed: true },
      { a: "x", passed: false },
      { a: 2, passed: true },
      { a: 3, passed: false },
    ];
    expect(() => maxTBound(rows, failed, ["a"])).toThrow(/column 'a' mixes kinds: row 1 has "x"/);
    expect(() => maxTBound(rows, failed, ["b"])).toThrow(/row 0 has no column 'b'/);
    expect(() => maxTBound(rows, failed, [], { alpha: 1 })).toThrow(/alpha must be in \(0, 1\)/);
  });
});
