import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { eBH } from "./e-bh.ts";
import { loadFixture } from "./reference.node.ts";

const eArray = fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 });
const alphaArb = fc.constantFrom(0.01, 0.05, 0.1, 0.2);

describe("eBH", () => {
  it("matches the definition on the reference cases", () => {
    const fx = loadFixture<[number[], number], number[]>("eBH");
    for (const { args, expected } of fx.cases) expect(eBH(...args), `eBH(K=${args[0].length})`).toEqual(expected);
  });

  it("gives the worked example", () => {
    expect(eBH([50, 1, 30, 0.5], 0.1)).toEqual([0, 2]);
    expect(eBH([], 0.1)).toEqual([]);
    expect(eBH([Infinity, 1], 0.05)).toEqual([0]);
  });

  it("rejects a superset of what BH rejects on p = min(1, 1/e)", () => {
    fc.assert(
      fc.property(eArray, alphaArb, (e, alpha) => {
        const rejected = new Set(eBH(e, alpha));
        const adj = benjaminiHochberg(e.map((v) => Math.min(1, 1 / v)));
        // BH at a hair below α: the two procedures are the same test, so only rounding at an exact tie could differ.
        return adj.every((a, i) => !(a <= alpha * (1 - 1e-12)) || rejected.has(i));
      }),
    );
  });

  it("is monotone: raising an e-value or α never un-rejects anything", () => {
    fc.assert(
      fc.property(eArray, alphaArb, fc.nat(), (e, alpha, j) => {
        const base = new Set(eBH(e, alpha));
        const up = [...e];
        up[j % e.length]! *= 2;
        const more = new Set(eBH(up, alpha));
        const looser = new Set(eBH(e, Math.min(0.5, alpha * 2)));
        return [...base].every((i) => more.has(i) && looser.has(i));
      }),
    );
  });

  it("rejects bad e-values and levels", () => {
    expect(() => eBH([1, -2], 0.1)).toThrow(/e\[1\] must be a non-negative e-value/);
    expect(() => eBH([1], 0)).toThrow(/alpha/);
  });
});
