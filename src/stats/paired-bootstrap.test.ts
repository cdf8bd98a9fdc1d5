import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expandedTail, pairedBootstrap } from "./paired-bootstrap.ts";

describe("pairedBootstrap", () => {
  it("is deterministic for a seed and changes with it", () => {
    const d = [0.1, 0.3, -0.1, 0.2, 0.4, 0, -0.2, 0.5];
    const a = pairedBootstrap(d, undefined, { seed: 7 });
    expect(pairedBootstrap(d, undefined, { seed: 7 })).toEqual(a);
    expect(pairedBootstrap(Float64Array.from(d), undefined, { seed: 7 })).toEqual(a);
    expect(pairedBootstrap(d, undefined, { seed: 8 })).not.toEqual(a);
  });

  it("pins the seeded output (the same numbers any JS engine must produce)", () => {
    // If this changes, every stored verdict computed with a seed changes: treat it as a breaking change.
    const r = pairedBootstrap([0.1, 0.3, -0.1, 0.2, 0.4], undefined, { seed: 1 });
    expect(r).toEqual({ lo: -0.06000000000000001, hi: 0.38, p: 0.030984507746126936 });
  });

  it("gives a point interval and p = 1 when every difference is 0, and a tiny p when all are positive", () => {
    expect(pairedBootstrap([0, 0, 0, 0])).toEqual({ lo: 0, hi: 0, p: 1 });
    const r = pairedBootstrap([1, 2, 3], undefined, { replicates: 999 });
    expect(r.p).toBe(2 / 1000);
    expect(r.lo).toBeGreaterThanOrEqual(1);
    expect(r.hi).toBeLessThanOrEqual(3);
  });

  it("with one case per cluster resamples exactly as the unclustered bootstrap does", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 40 }),
        fc.integer(),
        (d, seed) => {
          const labels = d.map((_, i) => `case-${i}`);
          const a = pairedBootstrap(d, undefined, { seed, replicates: 200 });
          const b = pairedBootstrap(d, labels, { seed, replicates: 200 });
          return a.lo === b.lo && a.hi === b.hi && a.p === b.p;
        },
      ),
      { numRuns: 50 },
    );
  });

  it("keeps the interval inside the range of the data and the p-value in (0, 1]", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        (d, g) => {
          const { lo, hi, p } = pairedBootstrap(
            d,
            d.map((_, i) => i % g),
            { replicates: 200 },
          );
          return Math.min(...d) - 1e-12 <= lo && lo <= hi && hi <= Math.max(...d) + 1e-12 && p > 0 && p <= 1;
        },
      ),
      { numRuns: 100 },
    );
  });

  it("widens when correlated cases are resampled together", () => {
    // 50 clusters of 10 identical cases: the effective sample is 50, not 500.
    const d: number[] = [];
    const g: number[] = [];
    for (let c = 0; c < 50; c++) {
      for (let i = 0; i < 10; i++) {
        d.push(c % 2 ? 1 : -0.8);
        g.push(c);
      }
    }
    const plain = pairedBootstrap(d);
    const clustered = pairedBootstrap(d, g);
    expect(clustered.hi - clustered.lo).toBeGreaterThan(2.5 * (plain.hi - plain.lo));
  });

  it("reads the expanded interval outside the plain percentile one, converging as n grows", () => {
    const d = Array.from({ length: 40 }, (_, i) => ((i * 37) % 11) / 10 - 0.4);
    const wide = pairedBootstrap(d, undefined, { seed: 2 });
    const plain = pairedBootstrap(d, undefined, { seed: 2, expanded: false });
    expect(wide.lo).toBeLessThan(plain.lo);
    expect(wide.hi).toBeGreaterThan(plain.hi);
    expect(wide.p).toBe(plain.p);
    expect(expandedTail(0.95, 40)).toBeCloseTo(0.020258, 6); // scipy: 0.0202575
    expect(expandedTail(0.95, 400)).toBeCloseTo(0.02451, 5);
    expect(expandedTail(0.95, 1)).toBeCloseTo(0.025, 15); // one unit: no t correction possible
  });

  it("rejects bad options", () => {
    expect(() => pairedBootstrap([])).toThrow(/diffs must hold at least 1 value/);
    expect(() => pairedBootstrap([1], undefined, { replicates: 0 })).toThrow(/replicates must be at least 1/);
    expect(() => pairedBootstrap([1], undefined, { seed: 0.5 })).toThrow(/seed must be an integer/);
    expect(() => pairedBootstrap([1, 2], ["a"])).toThrow(/same length/);
  });
});
