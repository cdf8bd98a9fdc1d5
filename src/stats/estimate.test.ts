import { describe, expect, it } from "vitest";
import { clusteredSE } from "./clustered-se.ts";
import { estimate, type Estimate } from "./estimate.ts";
import { expectClose, loadFixture } from "./reference.node.ts";
import { wilson } from "./wilson.ts";

type Expected = Omit<Estimate, "lo" | "hi"> & { lo: number | null; hi: number | null };

describe("estimate", () => {
  it("picks the method and interval the reference composition picks", () => {
    const fx = loadFixture<[number[], number[] | null, number], Expected>("estimate");
    for (const { args, expected } of fx.cases) {
      const [x, g, confidence] = args;
      const r = estimate(x, g ?? undefined, { confidence });
      const label = `estimate(n=${x.length}, ${g ? "clusters" : "no clusters"})`;
      expect(r.method, label).toBe(expected.method);
      expect(r.n).toBe(expected.n);
      expectClose(r.mean, expected.mean, 1e-9, 1e-14, `${label} mean`);
      if (expected.se === null) expect(r.se).toBeNull();
      else expectClose(r.se!, expected.se, 1e-9, 1e-14, `${label} se`);
      if (expected.df !== undefined) expectClose(r.df!, expected.df, 1e-9, 0, `${label} df`);
      if (expected.lo === null) {
        expect([r.lo, r.hi]).toEqual([-Infinity, Infinity]);
      } else {
        // A clustered interval uses a t quantile at a fractional df: stdlib and SciPy agree to about 1e-9 there.
        const rel = expected.method === "clustered" ? 1e-8 : 1e-9;
        expectClose(r.lo, expected.lo, rel, 1e-14, `${label} lo`);
        expectClose(r.hi, expected.hi!, rel, 1e-14, `${label} hi`);
      }
    }
  });

  it("gives the worked example", () => {
    const r = estimate([1, 1, 0, 1]);
    expect(r.method).toBe("wilson");
    expect([r.lo, r.hi]).toEqual(wilson(3, 4));
    expect(r.se).toBeCloseTo(Math.sqrt((0.75 * 0.25) / 4), 12);
  });

  it("clusters only when some cluster holds more than one case", () => {
    const x = [1, 0, 1, 1, 0, 1];
    expect(estimate(x, ["a", "b", "c", "d", "e", "f"]).method).toBe("wilson");
    const r = estimate(x, ["a", "a", "b", "b", "c", "c"]);
    expect(r.method).toBe("clustered");
    // CR2 for three equal clusters is CR0 × √(G/(G − 1)), on G − 1 = 2 df
    expect(r.se).toBeCloseTo(clusteredSE(x, ["a", "a", "b", "b", "c", "c"]) * Math.sqrt(3 / 2), 12);
    expect(r).toMatchObject({ clusters: 3, warning: expect.stringMatching(/^only 3 clusters/) });
    expect(r.df).toBeCloseTo(2, 10);
    expect(estimate([0.2, 0.5, 0.9]).method).toBe("clt");
  });

  it("stays inside [0, 1] for clustered 0/1 scores near the edge, and refuses to guess from one cluster", () => {
    const x = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0];
    const g = ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"];
    const r = estimate(x, g);
    expect(r.lo).toBeGreaterThan(0.4);
    expect(r.hi).toBeLessThanOrEqual(1);
    expect(r.hi).toBeGreaterThan(0.9);
    const one = estimate([1, 0, 1], ["a", "a", "a"]);
    expect(one).toMatchObject({ method: "clustered", se: null, lo: -Infinity, hi: Infinity, clusters: 1 });
    expect(one.warning).toMatch(/one cluster/);
  });

  it("clips to bounds and checks values against them", () => {
    const r = estimate([0.9, 1, 1, 0.95], undefined, { bounds: [0, 1] });
    expect(r.hi).toBeLessThanOrEqual(1);
    expect(estimate([0.5], undefined, { bounds: [0, 1] })).toMatchObject({ lo: 0, hi: 1, se: null });
    expect(() => estimate([1.5], undefined, { bounds: [0, 1] })).toThrow(/outside bounds/);
    expect(() => estimate([0.5], undefined, { bounds: [1, 0] })).toThrow(/lowest < highest/);
  });
});
