import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectClose, loadFixture } from "./reference.node.ts";
import { spearman } from "./spearman.ts";

describe("spearman", () => {
  it("matches scipy.stats.spearmanr", () => {
    const fx = loadFixture<[number[], number[]], { rho: number; p: number }>("spearman");
    for (const { args, expected } of fx.cases) {
      const r = spearman(...args);
      const label = `spearman(n=${args[0].length})`;
      expectClose(r.rho, expected.rho, 1e-9, 1e-14, `${label} rho`);
      // near rho = 0 the p-value inherits rho's absolute rounding; otherwise relative
      expectClose(r.p, expected.p, 1e-9, 1e-13, `${label} p`);
    }
  });

  it("gives the worked example", () => {
    const r = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]);
    expect(r.rho).toBeCloseTo(0.8208, 4);
    expect(r.p).toBeCloseTo(0.0886, 4);
  });

  it("is invariant under monotone transforms and flips sign when one variable is reversed", () => {
    const pair = fc.array(fc.tuple(fc.integer({ min: -9, max: 9 }), fc.integer({ min: -9, max: 9 })), {
      minLength: 3,
      maxLength: 30,
    });
    fc.assert(
      fc.property(pair, (rows) => {
        const x = rows.map((r) => r[0]);
        const y = rows.map((r) => r[1]);
        if (new Set(x).size < 2 || new Set(y).size < 2) return true;
        const a = spearman(x, y);
        const b = spearman(
          x.map((v) => Math.exp(v / 3)),
          y,
        );
        const c = spearman(
          x.map((v) => -v),
          y,
        );
        return Math.abs(a.rho - b.rho) < 1e-12 && Math.abs(a.rho + c.rho) < 1e-12 && Math.abs(a.p - c.p) < 1e-12;
      }),
    );
  });

  it("refuses a constant variable or fewer than 3 pairs", () => {
    expect(() => spearman([1, 1, 1], [1, 2, 3])).toThrow(/x is constant/);
    expect(() => spearman([1, 2], [1, 2])).toThrow(/at least 3/);
    expect(() => spearman([1, 2, 3, 4], [1, 2, 3])).toThrow(/same length/);
  });
});
