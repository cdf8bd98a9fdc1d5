import { describe, expect, it } from "vitest";
import { meanSE } from "./mean-se.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("meanSE", () => {
  it("matches numpy / scipy.stats.sem on the reference cases", () => {
    const fx = loadFixture<[number[]], { mean: number; se: number | null }>("meanSE");
    for (const { args, expected } of fx.cases) {
      const r = meanSE(args[0]);
      expectClose(r.mean, expected.mean, 1e-9, 1e-14, `meanSE(n=${args[0].length}) mean`);
      if (expected.se === null) expect(r.se).toBeNull();
      else expectClose(r.se!, expected.se, 1e-9, 1e-14, `meanSE(n=${args[0].length}) se`);
    }
  });

  it("gives the worked example, takes typed arrays, and null se for one value", () => {
    const r = meanSE([1, 2, 3, 4]);
    expect(r.mean).toBe(2.5);
    expect(r.se).toBeCloseTo(0.6455, 4);
    expect(meanSE(Float32Array.from([1, 2, 3, 4])).se).toBeCloseTo(0.6455, 4);
    expect(meanSE([3])).toEqual({ mean: 3, se: null });
  });

  it("rejects empty input and NaN", () => {
    expect(() => meanSE([])).toThrow(/at least 1 value/);
    expect(() => meanSE([1, Number.NaN])).toThrow(/values\[1\] must be finite/);
  });
});
