import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { passHatK } from "./pass-hat-k.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("passHatK", () => {
  it("matches exact C(p,k)/C(t,k) on the reference cases", () => {
    const fx = loadFixture<[number, number, number], number>("passHatK");
    for (const { args, expected } of fx.cases) expectClose(passHatK(...args), expected, 1e-9, 0, `passHatK(${args})`);
  });

  it("gives the worked example and the obvious ends", () => {
    expect(passHatK(4, 5, 3)).toBeCloseTo(0.4, 15);
    expect(passHatK(5, 5, 5)).toBe(1);
    expect(passHatK(2, 5, 3)).toBe(0);
    expect(passHatK(3, 5, 0)).toBe(1);
  });

  it("is the pass rate at k = 1 and never increases with k", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.nat(), fc.nat(), (t, a, b) => {
        const p = a % (t + 1);
        const k = (b % t) + 1;
        return Math.abs(passHatK(p, t, 1) - p / t) < 1e-15 && passHatK(p, t, k) <= passHatK(p, t, k - 1) + 1e-15;
      }),
    );
  });

  it("rejects impossible counts", () => {
    expect(() => passHatK(6, 5, 1)).toThrow("passHatK(): 6 passes out of 5 trials");
    expect(() => passHatK(1, 5, 6)).toThrow(/k = 6 exceeds/);
    expect(() => passHatK(0, 0, 0)).toThrow(/at least 1/);
  });
});
