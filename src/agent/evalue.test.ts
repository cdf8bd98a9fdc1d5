import { describe, expect, it } from "vitest";
import { CALIBRATORS, pToE, thresholdE, familyWeights, zOfP } from "./evalue.ts";

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

describe("M4's e-values and α shares", () => {
  it("thresholdE is 1/γ at p ≤ γ and 0 above: its mean over a uniform p is exactly 1", () => {
    expect(thresholdE(0.01, 0.025)).toBe(40);
    expect(thresholdE(0.03, 0.025)).toBe(0);
    let sum = 0;
    const grid = 100_000;
    for (let k = 0; k < grid; k++) sum += thresholdE((k + 0.5) / grid, 0.02);
    expect(sum / grid).toBeCloseTo(1, 3);
    expect(() => thresholdE(0.1, 0)).toThrow(/level 0 must lie in \(0, 1\]/);
  });

  it("familyWeights sum to K and follow exp(z²/2); zOfP reads a two-sided p", () => {
    expect(zOfP(0.05)).toBeCloseTo(1.959964, 5);
    const w = familyWeights([zOfP(1e-6), zOfP(0.04)]);
    expect(w[0]! + w[1]!).toBeCloseTo(2, 12);
    expect(w[0]).toBeGreaterThan(1.999);
    expect(familyWeights([2, 2, 2])).toEqual([1, 1, 1]);
    expect(familyWeights([40, 9])).toEqual([1, 1]); // both beyond the cap of 8: equal
    expect(() => familyWeights([Number.NaN])).toThrow(/must be a number ≥ 0/);
  });
});
