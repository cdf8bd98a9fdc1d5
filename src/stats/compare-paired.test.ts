import { describe, expect, it } from "vitest";
import { comparePaired } from "./compare-paired.ts";
import { adjustedPaired } from "./adjusted-paired.ts";
import { clusterMean } from "./cluster-mean.ts";
import { mcnemar } from "./mcnemar.ts";
import { newcombePaired } from "./newcombe-paired.ts";
import { pairedBootstrap } from "./paired-bootstrap.ts";

describe("comparePaired", () => {
  const a = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0];
  const b = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1];

  it("uses McNemar + Newcombe for independent 0/1 cases and reports the table", () => {
    const r = comparePaired(a, b);
    expect(r).toMatchObject({ n: 12, regressed: 9, fixed: 2, both: 1, neither: 0, method: "mcnemar-newcombe" });
    expect(r.a).toBeCloseTo(10 / 12, 15);
    expect(r.b).toBeCloseTo(3 / 12, 15);
    expect(r.diff).toBeCloseTo(r.b - r.a, 15);
    expect(r.p).toBe(mcnemar(9, 2));
    expect([r.lo, r.hi]).toEqual(newcombePaired(1, 9, 2, 0));
  });

  it("uses Agresti–Min's adjusted t for graded scores in [0, 1]", () => {
    const x = [0.2, 0.5, 0.9, 0.4, 0.7];
    const y = [0.3, 0.5, 0.6, 0.8, 0.9];
    const r = comparePaired(x, y, undefined, { seed: 3 });
    const adj = adjustedPaired(y.map((v, i) => v - x[i]!));
    expect(r).toMatchObject({ method: "adjusted-t", lo: adj.lo, hi: adj.hi, p: adj.p, n: 5, df: 4 });
    expect(r.diff).toBeCloseTo(0.08, 12);
    expect(r.regressed).toBeUndefined();
  });

  it("bootstraps differences beyond ±1 (scores not in [0, 1]), passing the seed through", () => {
    const x = [2, 5, 9, 4, 7];
    const y = [3, 5, 6, 8, 9];
    const r = comparePaired(x, y, undefined, { seed: 3 });
    const boot = pairedBootstrap(
      y.map((v, i) => v - x[i]!),
      undefined,
      { seed: 3 },
    );
    expect(r).toMatchObject({ method: "bootstrap", lo: boot.lo, hi: boot.hi, p: boot.p });
  });

  it("uses the cluster-robust t when clusters hold several cases, with a floor and a warning, still counting the table", () => {
    const g = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5];
    const r = comparePaired(a, b, g);
    expect(r).toMatchObject({ method: "cluster-t", regressed: 9, fixed: 2, clusters: 6 });
    const c = clusterMean(
      b.map((v, i) => v - a[i]!),
      g,
    );
    expect(r.df).toBeCloseTo(c.df, 12);
    expect(r.warning).toMatch(/^only 6 clusters/);
    // no case disagrees: the interval is not [0, 0] but one more disagreement wide
    const same = comparePaired([1, 1, 0, 0, 1, 1], [1, 1, 0, 0, 1, 1], [0, 0, 1, 1, 2, 2]);
    expect(same.hi).toBeCloseTo(1.959964 / 8, 5);
    expect(same.p).toBe(1);
    expect(
      comparePaired(
        a,
        b,
        a.map((_, i) => i),
      ).method,
    ).toBe("mcnemar-newcombe");
  });

  it("rejects a bad bootstrap option as its own, even when McNemar would run", () => {
    expect(() => comparePaired(a, b, undefined, { seed: 0.5 })).toThrow(/^comparePaired\(\): seed must be an integer/);
    expect(() => comparePaired(a, b, undefined, { replicates: 0 })).toThrow(/^comparePaired\(\): replicates must be/);
    expect(() => comparePaired(a, b, undefined, { expanded: 1 as unknown as boolean })).toThrow(
      /^comparePaired\(\): expanded must be true or false/,
    );
  });

  it("rejects runs of different lengths", () => {
    expect(() => comparePaired([1, 0], [1])).toThrow(/a and b must have the same length, got 2 and 1/);
  });
});
