import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rankAverage } from "./rank.ts";

describe("rankAverage", () => {
  it("averages tied ranks and counts Σ(t³ − t)", () => {
    const { ranks, tieTerm } = rankAverage([10, 20, 10, 30, 20, 20]);
    expect(Array.from(ranks)).toEqual([1.5, 4, 1.5, 6, 4, 4]);
    expect(tieTerm).toBe(6 + 24);
  });

  it("ranks always sum to n(n + 1)/2", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 50 }), (x) => {
        const s = rankAverage(x).ranks.reduce((a, b) => a + b, 0);
        return s === (x.length * (x.length + 1)) / 2;
      }),
    );
  });
});
