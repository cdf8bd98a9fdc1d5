import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eValueBinomial, logEValueBinomial, type EValueOptions } from "./e-value-binomial.ts";
import { eValueMcNemar } from "./e-value-mcnemar.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("eValueBinomial", () => {
  it("matches the log e-value computed with scipy.special (betaln, betainc)", () => {
    const fx = loadFixture<[number, number, number, EValueOptions], number | null>("eValueBinomial");
    for (const { args, expected } of fx.cases) {
      const got = logEValueBinomial(...args);
      const label = `logEValueBinomial(${args.slice(0, 3)}, ${JSON.stringify(args[3])})`;
      if (expected === null) {
        // the reference's tail probability underflowed: the e-value is below 1e-300
        expect(got, label).toBeLessThan(-690);
        continue;
      }
      // absolute in log space = relative on e
      expectClose(got, expected, 1e-9, 1e-9, label);
    }
  });

  it("gives the worked example: 9 of 10 against ½ is B(10, 2)·2¹⁰ = 1024/110", () => {
    expect(eValueBinomial(9, 10)).toBeCloseTo(1024 / 110, 10);
    expect(eValueMcNemar(1, 9)).toBe(eValueBinomial(9, 10));
    expect(eValueMcNemar(0, 0)).toBe(1);
  });

  it("never overflows internally: huge counts stay finite in log space", () => {
    expect(Number.isFinite(logEValueBinomial(10 ** 7, 10 ** 7))).toBe(true);
    expect(logEValueBinomial(10 ** 7, 10 ** 7)).toBeGreaterThan(6e6);
    expect(eValueBinomial(10 ** 7, 10 ** 7)).toBe(Infinity);
    expect(eValueBinomial(5 * 10 ** 6, 10 ** 7)).toBeLessThan(1);
  });

  it("one-sided e-values favour their own side and the two sides average to the two-sided one (uniform prior, p0 = ½)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.nat(), (n, j) => {
        const k = j % (n + 1);
        const g = eValueBinomial(k, n, 0.5, { alternative: "greater" });
        const l = eValueBinomial(k, n, 0.5, { alternative: "less" });
        const two = eValueBinomial(k, n);
        const sideOk = 2 * k > n ? g >= l : 2 * k < n ? l >= g : Math.abs(g - l) < 1e-9 * g;
        return sideOk && Math.abs((g + l) / 2 - two) <= 1e-9 * two;
      }),
    );
  });

  it("rejects bad input", () => {
    expect(() => eValueBinomial(11, 10)).toThrow("eValueBinomial(): 11 successes out of 10 trials");
    expect(() => eValueBinomial(1, 10, 1)).toThrow(/p0/);
    expect(() => eValueBinomial(1, 10, 0.5, { a: 0 })).toThrow(/a must be positive/);
    expect(() => eValueBinomial(1, 10, 0.5, { alternative: "up" as "greater" })).toThrow(/alternative/);
  });
});
