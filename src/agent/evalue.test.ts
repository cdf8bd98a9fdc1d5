import { describe, expect, it } from "vitest";
import { CALIBRATORS, pToE } from "./evalue.ts";

describe("pToE: the mixture calibrator", () => {
  it("matches its closed form at known points", () => {
    expect(pToE(1)).toBe(0.5);
    expect(pToE(0.001)).toBeCloseTo(20.79, 1);
    expect(pToE(1e-4)).toBeCloseTo(117.9, 0);
    expect(Number.isFinite(pToE(0))).toBe(true);
  });

  it("is a valid calibrator: its integral over a uniform p is at most 1", () => {
    // Midpoint rule on a log grid, p from ε = 1e-12 to 1; the mass below ε is exactly ∫₀¹ ε^κ dκ = (1 − ε)/(−ln ε).
    let total = 0;
    const steps = 200_000;
    const lo = Math.log(1e-12);
    for (let k = 0; k < steps; k++) {
      const a = lo + (k * -lo) / steps;
      const b = lo + ((k + 1) * -lo) / steps;
      const mid = Math.exp((a + b) / 2);
      total += pToE(mid) * (Math.exp(b) - Math.exp(a));
    }
    const below = (1 - 1e-12) / -Math.log(1e-12);
    expect(total + below).toBeCloseTo(1, 3);
  });

  it("decreases in p and beats 1/(2√p) where decisions are made", () => {
    for (const p of [1e-6, 1e-4, 1e-3, 0.003]) {
      expect(pToE(p)).toBeGreaterThan(1 / (2 * Math.sqrt(p)));
      expect(pToE(p)).toBeGreaterThan(pToE(p * 1.1));
    }
  });

  it("rejects a p outside [0, 1]", () => {
    expect(() => pToE(1.2)).toThrow(/must lie in \[0, 1\]/);
    expect(() => CALIBRATORS.sqrt.toE(-0.1)).toThrow(/CALIBRATORS.sqrt: p-value -0.1 must lie in \[0, 1\]/);
    expect(CALIBRATORS.sqrt.toE(0.25)).toBe(1);
    expect(Number.isFinite(CALIBRATORS.sqrt.toE(0))).toBe(true);
  });
});
