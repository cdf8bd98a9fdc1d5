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

  it("randomized one-sided: P(A > a) + u·P(A = a), and its level is exactly γ over the tables with these margins", () => {
    const r = fisherExact(
      [
        [8, 2],
        [1, 5],
      ],
      "greater",
      { randomize: 0.5 },
    );
    expect(r.p).toBeCloseTo(0.012675, 6);
    expect(r.pointProbability).toBeCloseTo(0.023601, 6);
    // Margins 9 × 10 of 16: for each possible a, the share of u ∈ [0, 1) with p ≤ γ, weighted by P(A = a), is γ.
    for (const alternative of ["greater", "less"] as const)
      for (const gamma of [0.01, 0.05, 0.2]) {
        let level = 0;
        for (let a = 3; a <= 9; a++) {
          const table = [
            [a, 9 - a],
            [10 - a, a - 3],
          ];
          const { p: p0, pointProbability: point } = fisherExact(table, alternative, { randomize: 0 });
          level += point * Math.min(1, Math.max(0, (gamma - p0) / point));
        }
        expect(level, `${alternative} γ = ${gamma}`).toBeCloseTo(gamma, 12);
      }
    // The plain exact test at the same γ spends less (conservative).
    let plain = 0;
    for (let a = 3; a <= 9; a++) {
      const t = fisherExact(
        [
          [a, 9 - a],
          [10 - a, a - 3],
        ],
        "greater",
      );
      if (t.p <= 0.05) plain += t.pointProbability;
    }
    expect(plain).toBeLessThan(0.05);
    expect(() =>
      fisherExact(
        [
          [1, 2],
          [3, 4],
        ],
        "two-sided",
        { randomize: 0.5 },
      ),
    ).toThrow('fisherExact(): randomize needs a one-sided alternative ("greater" or "less"), got "two-sided"');
    expect(() =>
      fisherExact(
        [
          [1, 2],
          [3, 4],
        ],
        "greater",
        { randomize: 1 },
      ),
    ).toThrow("fisherExact(): randomize must be a uniform draw in [0, 1), got 1");
  });
});
