import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectClose, loadFixture } from "./reference.node.ts";
import { wilson } from "./wilson.ts";

describe("wilson", () => {
  it("matches statsmodels' Wilson interval on the reference cases", () => {
    const fx = loadFixture<[number, number, number], [number, number]>("wilson");
    expect(fx.cases.length).toBeGreaterThanOrEqual(300);
    for (const { args, expected } of fx.cases) {
      const [lo, hi] = wilson(...args);
      expectClose(lo, expected[0], 1e-9, 1e-15, `wilson(${args}) lo`);
      expectClose(hi, expected[1], 1e-9, 1e-15, `wilson(${args}) hi`);
    }
  });

  it("gives the worked example and exact ends", () => {
    const [lo, hi] = wilson(45, 50);
    expect(lo).toBeCloseTo(0.786, 3);
    expect(hi).toBeCloseTo(0.957, 3);
    expect(wilson(0, 20)[0]).toBe(0);
    expect(wilson(20, 20)[1]).toBe(1);
  });

  it("contains p̂, stays in [0, 1], and widens with confidence", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
        const s = Math.round(f * n);
        const [lo, hi] = wilson(s, n);
        const [lo99, hi99] = wilson(s, n, 0.99);
        return 0 <= lo && lo <= s / n && s / n <= hi && hi <= 1 && lo99 <= lo && hi99 >= hi;
      }),
    );
  });

  it("is symmetric: failures' interval mirrors successes'", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 1000 }), (n, k) => {
        const s = k % (n + 1);
        const [lo, hi] = wilson(s, n);
        const [lo2, hi2] = wilson(n - s, n);
        return Math.abs(lo - (1 - hi2)) < 1e-12 && Math.abs(hi - (1 - lo2)) < 1e-12;
      }),
    );
  });

  it("rejects bad input with a message saying what was expected", () => {
    expect(() => wilson(7, 5)).toThrow(new RangeError("wilson(): 7 successes out of 5 trials"));
    expect(() => wilson(0, 0)).toThrow(RangeError);
    expect(() => wilson(1.5, 5)).toThrow(/non-negative integer/);
    expect(() => wilson(1, 5, 1)).toThrow(/confidence/);
    expect(() => wilson(Number.NaN, 5)).toThrow(RangeError);
    expect(() => wilson("3" as unknown as number, 5)).toThrow(TypeError);
  });
});
