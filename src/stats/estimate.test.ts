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
      if (expected.lo === null) {
        expect([r.lo, r.hi]).toEqual([-Infinity, Infinity]);
      } else {
        expectClose(r.lo, expected.lo, 1e-9, 1e-14, `${label} lo`);
        expectClose(r.hi, expected.hi!, 1e-9, 1e-14, `${label} hi`);
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
    expect(r.se).toBe(clusteredSE(x, ["a", "a", "b", "b", "c", "c"]));
    expect(estimate([0.2, 0.5, 0.9]).method).toBe("clt");
  });

  it("clips to bounds and checks values against them", () => {
    const r = estimate([0.9, 1, 1, 0.95], undefined, { bounds: [0, 1] });
    expect(r.hi).toBeLessThanOrEqual(1);
    expect(estimate([0.5], undefined, { bounds: [0, 1] })).toMatchObject({ lo: 0, hi: 1, se: null });
    expect(() => estimate([1.5], undefined, { bounds: [0, 1] })).toThrow(/outside bounds/);
    expect(() => estimate([0.5], undefined, { bounds: [1, 0] })).toThrow(/lowest < highest/);
  });
});
