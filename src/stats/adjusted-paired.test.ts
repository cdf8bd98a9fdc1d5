import { describe, expect, it } from "vitest";
import { adjustedPaired } from "./adjusted-paired.ts";
import { tQuantile } from "./distributions.ts";

describe("adjustedPaired", () => {
  it("is Agresti–Min for 0/1 differences: cells + ½, n + 2", () => {
    // 3 cases B fixed (+1), 1 case B broke (−1), 16 unchanged
    const d = [...Array(3).fill(1), -1, ...Array(16).fill(0)];
    const r = adjustedPaired(d);
    const p21 = 3.5 / 22;
    const p12 = 1.5 / 22;
    const se = Math.sqrt((p12 + p21 - (p21 - p12) ** 2) / 22);
    expect(r.mean).toBeCloseTo(p21 - p12, 14);
    expect(r.se).toBeCloseTo(se, 14);
    expect(r.hi - r.mean).toBeCloseTo(tQuantile(0.975, 19) * se, 12);
  });

  it("gives the worked example", () => {
    const r = adjustedPaired([0, 0, 1, 0, -1, 1, 0, 1, 0, 0]);
    expect(r.mean).toBeCloseTo(2 / 12, 12);
    expect(r.se).toBeCloseTo(0.18002, 5);
    expect(r.p).toBeCloseTo(0.3787, 4);
  });

  it("never collapses to a point when no case disagrees", () => {
    const r = adjustedPaired(new Array(30).fill(0));
    expect(r.mean).toBe(0);
    expect(r.hi).toBeGreaterThan(0.05);
    expect(r.p).toBe(1);
  });

  it("refuses a difference beyond the bound, naming it", () => {
    expect(() => adjustedPaired([0.5, 2])).toThrow(/^adjustedPaired\(\): diffs\[1\] = 2 lies outside \[−1, 1\]/);
    expect(adjustedPaired([0.5, 2], { bound: 2 }).n).toBe(2);
  });
});
