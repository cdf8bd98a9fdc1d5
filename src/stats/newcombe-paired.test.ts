import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newcombePaired } from "./newcombe-paired.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("newcombePaired", () => {
  it("matches the reference method-10 interval", () => {
    const fx = loadFixture<[number, number, number, number, number], [number, number]>("newcombePaired");
    for (const { args, expected } of fx.cases) {
      const [lo, hi] = newcombePaired(...args);
      expectClose(lo, expected[0], 1e-9, 1e-14, `newcombePaired(${args}) lo`);
      expectClose(hi, expected[1], 1e-9, 1e-14, `newcombePaired(${args}) hi`);
    }
  });

  it("reproduces published values", () => {
    // Cavo et al. (2012), R contingencytables: estimate −0.0621 (95% CI −0.1186 to −0.0046) for A − B.
    const [lo, hi] = newcombePaired(59, 6, 16, 80);
    expect(lo).toBeCloseTo(0.0046, 4);
    expect(hi).toBeCloseTo(0.1186, 4);
    const [l3, h3] = newcombePaired(3, 0, 0, 0);
    expect(l3).toBeCloseTo(-0.56, 2);
    expect(h3).toBeCloseTo(0.56, 2);
  });

  it("contains the observed difference and mirrors when A and B swap", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 4, maxLength: 4 }), ([a, b, c, d]) => {
        if (a! + b! + c! + d! === 0) return true;
        const n = a! + b! + c! + d!;
        const [lo, hi] = newcombePaired(a!, b!, c!, d!);
        const [lo2, hi2] = newcombePaired(a!, c!, b!, d!);
        const diff = (c! - b!) / n;
        return lo <= diff + 1e-12 && diff <= hi + 1e-12 && Math.abs(lo + hi2) < 1e-12 && Math.abs(hi + lo2) < 1e-12;
      }),
    );
  });

  it("rejects an empty table", () => {
    expect(() => newcombePaired(0, 0, 0, 0)).toThrow(/empty/);
  });
});
