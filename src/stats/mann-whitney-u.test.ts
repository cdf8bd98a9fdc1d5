import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mannWhitneyU } from "./mann-whitney-u.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("mannWhitneyU", () => {
  it("matches scipy.stats.mannwhitneyu(method='asymptotic')", () => {
    const fx = loadFixture<[number[], number[]], { u: number; p: number; auc: number }>("mannWhitneyU");
    for (const { args, expected } of fx.cases) {
      const r = mannWhitneyU(...args);
      const label = `mannWhitneyU(n=${args[0].length}, ${args[1].length})`;
      expectClose(r.u, expected.u, 1e-12, 0, `${label} u`);
      expectClose(r.p, expected.p, 1e-9, 0, `${label} p`);
      expectClose(r.auc, expected.auc, 1e-12, 0, `${label} auc`);
    }
  });

  it("gives the worked example", () => {
    const r = mannWhitneyU([3, 4, 5], [1, 2]);
    expect(r.u).toBe(6);
    expect(r.auc).toBe(1);
    expect(r.p).toBeCloseTo(0.1489, 4);
  });

  it("has U_x + U_y = n_x n_y and the same p both ways", () => {
    const arr = fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 25 });
    fc.assert(
      fc.property(arr, arr, (x, y) => {
        const a = mannWhitneyU(x, y);
        const b = mannWhitneyU(y, x);
        return a.u + b.u === x.length * y.length && Math.abs(a.p - b.p) < 1e-12 && Math.abs(a.auc + b.auc - 1) < 1e-12;
      }),
    );
  });

  it("rejects empty samples", () => {
    expect(() => mannWhitneyU([], [1])).toThrow(/x must hold at least 1 value/);
  });
});
