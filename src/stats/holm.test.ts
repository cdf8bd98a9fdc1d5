import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { holm } from "./holm.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

const pArray = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 });

describe("holm and benjaminiHochberg", () => {
  for (const [name, fn] of [
    ["holm", holm],
    ["benjaminiHochberg", benjaminiHochberg],
  ] as const) {
    it(`${name} matches statsmodels' multipletests`, () => {
      const fx = loadFixture<[number[]], number[]>(name);
      for (const { args, expected } of fx.cases) {
        const got = fn(args[0]);
        expect(got.length).toBe(expected.length);
        got.forEach((v, i) => expectClose(v, expected[i]!, 1e-9, 0, `${name}(m=${args[0].length})[${i}]`));
      }
    });

    it(`${name}: adjusted p is monotone in raw p, in [raw p, 1]`, () => {
      fc.assert(
        fc.property(pArray, (p) => {
          const adj = fn(p);
          return p.every(
            (pi, i) => adj[i]! >= pi && adj[i]! <= 1 && p.every((pj, j) => !(pi < pj) || adj[i]! <= adj[j]!),
          );
        }),
      );
    });
  }

  it("gives the worked examples", () => {
    expect(holm([0.01, 0.04, 0.03])).toEqual([0.03, 0.06, 0.06]);
    const bh = benjaminiHochberg([0.01, 0.04, 0.03]);
    [0.03, 0.04, 0.04].forEach((v, i) => expect(bh[i]).toBeCloseTo(v, 15));
    expect(holm([])).toEqual([]);
  });

  it("Holm ≥ BH ≥ raw p", () => {
    fc.assert(
      fc.property(pArray, (p) => {
        const h = holm(p);
        const b = benjaminiHochberg(p);
        return p.every((pi, i) => h[i]! >= b[i]! && b[i]! >= pi);
      }),
    );
  });

  it("rejects values that are not p-values", () => {
    expect(() => holm([0.5, 1.2])).toThrow(/p\[1\] must lie in \[0, 1\]/);
    expect(() => benjaminiHochberg([Number.NaN])).toThrow(RangeError);
  });
});
