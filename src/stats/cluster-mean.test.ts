import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clusterMean } from "./cluster-mean.ts";
import { clusteredSE } from "./clustered-se.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("clusterMean", () => {
  it("matches CR2 and Bell–McCaffrey df computed with explicit matrices", () => {
    const fx = loadFixture<
      [number[], number[], number],
      { mean: number; se: number; df: number; lo: number; hi: number; p: number }
    >("clusterMean");
    expect(fx.cases.length).toBeGreaterThanOrEqual(200);
    for (const { args, expected } of fx.cases) {
      const r = clusterMean(args[0], args[1], { confidence: args[2] });
      const label = `clusterMean(n=${args[0].length})`;
      for (const k of ["mean", "se", "df"] as const) expectClose(r[k], expected[k], 1e-9, 1e-13, `${label} ${k}`);
      // Student-t quantiles and tails at a fractional df (stdlib vs SciPy) agree to about 1e-9 relative.
      // An end near 0 is a difference of two larger numbers: its error is relative to their scale.
      const scale = Math.abs(expected.mean) + (expected.hi - expected.lo);
      for (const k of ["lo", "hi"] as const) expectClose(r[k], expected[k], 1e-8, 1e-9 * scale, `${label} ${k}`);
      expectClose(r.p, expected.p, 1e-8, 1e-13, `${label} p`);
    }
  });

  it("gives the worked example: equal clusters are CR0·√(G/(G−1)) on G − 1 df", () => {
    const x = [1, 1, 0, 0, 1, 0];
    const g = ["a", "a", "b", "b", "c", "c"];
    const r = clusterMean(x, g);
    expect(r).toMatchObject({ n: 6, clusters: 3, mean: 0.5 });
    expect(r.se).toBeCloseTo(clusteredSE(x, g) * Math.sqrt(1.5), 12);
    expect(r.df).toBeCloseTo(2, 12);
    expect(r.lo).toBeCloseTo(-0.742069, 5);
    expect(r.p).toBeCloseTo(0.225403, 5);
  });

  it("with every case its own cluster, it is the ordinary t interval", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 3, maxLength: 30 }), (xs) => {
        const r = clusterMean(
          xs,
          xs.map((_, i) => i),
        );
        const m = xs.reduce((a, b) => a + b, 0) / xs.length;
        const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
        return Math.abs(r.se - sd / Math.sqrt(xs.length)) < 1e-9 && Math.abs(r.df - (xs.length - 1)) < 1e-9;
      }),
    );
  });

  it("one cluster says nothing about the spread; bad input is refused by name", () => {
    expect(clusterMean([1, 0, 1], ["a", "a", "a"])).toMatchObject({ clusters: 1, se: 0, p: 1 });
    expect(() => clusterMean([1, 2], ["a"])).toThrow(/^clusterMean\(\): values and clusters must have the same length/);
    expect(() => clusterMean([1, 2], ["a", "b"], { confidence: 2 })).toThrow(/^clusterMean\(\): confidence/);
  });
});
