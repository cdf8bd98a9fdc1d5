import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mcnemar } from "./mcnemar.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("mcnemar", () => {
  it("matches statsmodels' exact McNemar on the reference cases", () => {
    // both sides compute the binomial cdf as an incomplete beta; below 1e-300 (subnormal) precision runs out
    const fx = loadFixture<[number, number], number>("mcnemar");
    for (const { args, expected } of fx.cases)
      expectClose(mcnemar(...args), expected, 1e-9, 1e-300, `mcnemar(${args})`);
  });

  it("gives the worked example and p = 1 with no disagreement", () => {
    expect(mcnemar(10, 2)).toBeCloseTo(2 * (79 / 4096), 14);
    expect(mcnemar(0, 0)).toBe(1);
    expect(mcnemar(3, 3)).toBe(1);
  });

  it("is symmetric in (b, c), a probability, and falls as the split gets more lopsided", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }), (b, c) => {
        const p = mcnemar(b, c);
        const more = b >= c ? mcnemar(b + 1, c) : mcnemar(b, c + 1);
        return p === mcnemar(c, b) && p >= 0 && p <= 1 && more <= p + 1e-12;
      }),
    );
  });

  it("rejects non-counts", () => {
    expect(() => mcnemar(-1, 2)).toThrow(/b must be a non-negative integer/);
    expect(() => mcnemar(1, 2.5)).toThrow(/c must be/);
  });
});
