import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fisherExact } from "./fisher-exact.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("fisherExact", () => {
  it("matches SciPy's hypergeometric sum on the reference cases", () => {
    const fx = loadFixture<[number[][]], { p: number; oddsRatio: number | "Infinity" | null }>("fisherExact");
    for (const { args, expected } of fx.cases) {
      const r = fisherExact(args[0]);
      const label = `fisherExact(${JSON.stringify(args[0])})`;
      expectClose(r.p, expected.p, 1e-9, 1e-300, `${label} p`);
      const odds = expected.oddsRatio === "Infinity" ? Infinity : expected.oddsRatio;
      if (odds === null || odds === Infinity) expect(r.oddsRatio, label).toBe(odds);
      else expectClose(r.oddsRatio!, odds, 1e-12, 0, `${label} odds`);
    }
  });

  it("one-sided: matches scipy.stats.fisher_exact(alternative='greater' | 'less')", () => {
    const fx = loadFixture<[number[][], "greater" | "less"], number>("fisherExactOneSided");
    for (const { args, expected } of fx.cases)
      expectClose(fisherExact(args[0], args[1]).p, expected, 1e-9, 1e-300, `fisherExact(${JSON.stringify(args)})`);
    expect(() =>
      fisherExact(
        [
          [1, 2],
          [3, 4],
        ],
        "up" as never,
      ),
    ).toThrow(/^fisherExact\(\): alternative must be/);
  });

  it("gives the worked example", () => {
    const r = fisherExact([
      [8, 2],
      [1, 5],
    ]);
    expect(r.oddsRatio).toBe(20);
    expect(r.p).toBeCloseTo(0.034965, 6);
  });

  it("is invariant to transposing and to swapping both rows and columns", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 4, maxLength: 4 }), ([a, b, c, d]) => {
        const p = fisherExact([
          [a!, b!],
          [c!, d!],
        ]).p;
        const t = fisherExact([
          [a!, c!],
          [b!, d!],
        ]).p;
        const s = fisherExact([
          [d!, c!],
          [b!, a!],
        ]).p;
        return p > 0 && p <= 1 && Math.abs(p - t) <= 1e-12 * p && Math.abs(p - s) <= 1e-12 * p;
      }),
    );
  });

  it("rejects tables that are not 2×2 counts", () => {
    expect(() => fisherExact([[1, 2]])).toThrow(/2×2/);
    expect(() =>
      fisherExact([
        [1, 2],
        [3, -1],
      ]),
    ).toThrow(/table\[1\]\[1\]/);
  });
});
