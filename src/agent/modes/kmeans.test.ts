import { describe, expect, it } from "vitest";
import { adjustedRand } from "./adjusted-rand.ts";
import { gapStatistic } from "./gap-statistic.ts";
import { kMeans } from "./kmeans.ts";
import { principalAxes } from "./principal-axes.ts";
import { silhouette } from "./silhouette.ts";

describe("kMeans", () => {
  it("gives the worked example, numbered by first appearance", () => {
    const fit = kMeans({ values: new Float64Array([0, 0.2, 5, 5.2, 0.1]), d: 1 }, 2);
    expect(Array.from(fit.assignments)).toEqual([0, 0, 1, 1, 0]);
    expect(Array.from(fit.centroids)).toEqual([expect.closeTo(0.1, 12), expect.closeTo(5.1, 12)]);
    expect(fit.inertia).toBeCloseTo(0.02 + 0.02, 12);
  });

  it("is the same for the same seed, and finds the best of its starts", () => {
    const values = new Float64Array(200);
    for (let i = 0; i < 100; i++) {
      values[2 * i] = (i % 4) * 10 + ((i * 7) % 5) * 0.1;
      values[2 * i + 1] = Math.floor(i / 4) % 2 === 0 ? 0 : 0.3;
    }
    const a = kMeans({ values, d: 2 }, 4, { seed: 5 });
    expect(kMeans({ values, d: 2 }, 4, { seed: 5 })).toEqual(a);
    // Four columns 10 apart: the true groups, whatever the seed.
    for (const seed of [1, 2, 3]) {
      const fit = kMeans({ values, d: 2 }, 4, { seed });
      expect(
        adjustedRand(
          fit.assignments,
          Array.from({ length: 100 }, (_, i) => i % 4),
        ),
      ).toBe(1);
    }
  });

  it("keeps k groups when points coincide", () => {
    const fit = kMeans({ values: new Float64Array([1, 1, 1, 2]), d: 1 }, 2);
    expect(new Set(fit.assignments).size).toBe(2);
  });

  it("refuses bad input, naming it", () => {
    expect(() => kMeans({ values: new Float64Array([1, 2, 3]), d: 2 }, 1)).toThrow(
      /3 values are not a whole number of points of 2/,
    );
    expect(() => kMeans({ values: new Float64Array([1, NaN]), d: 1 }, 1)).toThrow(/coordinate 0 of point 1 is NaN/);
    expect(() => kMeans({ values: new Float64Array([1, 2]), d: 1 }, 3)).toThrow(
      /k must be an integer from 1 to the number of points \(2\), got 3/,
    );
  });
});

describe("adjustedRand", () => {
  it("gives scikit-learn's documented values", () => {
    expect(adjustedRand([0, 0, 1, 1], [0, 0, 1, 1])).toBe(1);
    expect(adjustedRand([0, 0, 1, 1], [1, 1, 0, 0])).toBe(1);
    expect(adjustedRand([0, 0, 1, 2], [0, 0, 1, 1])).toBeCloseTo(0.5714285714285715, 14);
    expect(adjustedRand([0, 0, 0, 0], [0, 1, 2, 3])).toBe(0);
    expect(adjustedRand([0, 0, 1, 1], [0, 1, 0, 1])).toBeCloseTo(-0.5, 14);
  });

  it("refuses groupings of different items", () => {
    expect(() => adjustedRand([0, 1], [0])).toThrow(/label 2 and 1 items/);
  });
});

describe("silhouette", () => {
  it("gives the worked example", () => {
    // Point 0: a = 1, b = (10 + 11) / 2, s = 1 − 1/10.5; point 1: b = 9.5; and symmetrically.
    const expected = (2 * (1 - 1 / 10.5) + 2 * (1 - 1 / 9.5)) / 4;
    expect(silhouette({ values: new Float64Array([0, 1, 10, 11]), d: 1 }, [0, 0, 1, 1])).toBeCloseTo(expected, 14);
  });

  it("counts a point alone in its group as 0, and needs two groups", () => {
    expect(silhouette({ values: new Float64Array([0, 1, 10]), d: 1 }, [0, 0, 1])).toBeCloseTo(
      (1 - 1 / 10 + 1 - 1 / 9) / 3,
      14,
    );
    expect(() => silhouette({ values: new Float64Array([0, 1]), d: 1 }, [0, 0])).toThrow(
      /at least two non-empty groups/,
    );
  });
});

describe("principalAxes", () => {
  it("finds the diagonal of points on a line, and the variances in order", () => {
    const { axes, variances } = principalAxes({ values: new Float64Array([0, 0, 1, 1, 2, 2]), d: 2 });
    expect(Math.abs(axes[0]!)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(axes[0]! * axes[1]!).toBeCloseTo(0.5, 12);
    expect(variances[0]).toBeCloseTo(2, 12);
    expect(variances[1]).toBeCloseTo(0, 12);
  });

  it("gives orthonormal axes whose variances sum to the total variance", () => {
    const values = Float64Array.from({ length: 60 }, (_, i) => Math.sin(i * 1.3) * (1 + (i % 3)));
    const { axes, variances } = principalAxes({ values, d: 3 });
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++) {
        let dot = 0;
        for (let j = 0; j < 3; j++) dot += axes[r * 3 + j]! * axes[c * 3 + j]!;
        expect(dot).toBeCloseTo(r === c ? 1 : 0, 10);
      }
    let total = 0;
    for (let c = 0; c < 3; c++) {
      const col = Array.from({ length: 20 }, (_, i) => values[i * 3 + c]!);
      const m = col.reduce((s, x) => s + x, 0) / 20;
      total += col.reduce((s, x) => s + (x - m) ** 2, 0) / 19;
    }
    expect(variances[0]! + variances[1]! + variances[2]!).toBeCloseTo(total, 10);
    expect(variances[0]!).toBeGreaterThanOrEqual(variances[1]!);
  });
});

describe("gapStatistic", () => {
  it("gives the worked example: two tight groups", () => {
    expect(gapStatistic({ values: new Float64Array([0, 0.1, 0.2, 9, 9.1, 9.2]), d: 1 }, 3).k).toBe(2);
  });

  it("gives one group for a single Gaussian-like blob", () => {
    // Evenly spaced normal quantiles: one bell, no groups.
    const values = Float64Array.from({ length: 99 }, (_, i) => {
      const p = (i + 0.5) / 99;
      return Math.sqrt(2) * inverseErf(2 * p - 1);
    });
    const gap = gapStatistic({ values, d: 1 }, 4);
    expect(gap.k).toBe(1);
    expect(gap.rows.map((r) => r.k)).toEqual([1, 2, 3, 4]);
  });
});

/** Winitzki's approximation: enough to lay out a bell in a test. */
function inverseErf(x: number): number {
  const a = 0.147;
  const l = Math.log(1 - x * x);
  const t = 2 / (Math.PI * a) + l / 2;
  return Math.sign(x) * Math.sqrt(Math.sqrt(t * t - l / a) - t);
}
