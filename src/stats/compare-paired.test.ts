import { describe, expect, it } from "vitest";
import { comparePaired } from "./compare-paired.ts";
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

  it("bootstraps graded scores, passing the seed through", () => {
    const x = [0.2, 0.5, 0.9, 0.4, 0.7];
    const y = [0.3, 0.5, 0.6, 0.8, 0.9];
    const r = comparePaired(x, y, undefined, { seed: 3 });
    const d = y.map((v, i) => v - x[i]!);
    const boot = pairedBootstrap(d, undefined, { seed: 3 });
    expect(r).toMatchObject({ method: "bootstrap", lo: boot.lo, hi: boot.hi, p: boot.p, n: 5 });
    expect(r.regressed).toBeUndefined();
  });

  it("cluster-bootstraps 0/1 scores when clusters hold several cases, still counting the table", () => {
    const g = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5];
    const r = comparePaired(a, b, g);
    expect(r).toMatchObject({ method: "cluster-bootstrap", regressed: 9, fixed: 2 });
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
