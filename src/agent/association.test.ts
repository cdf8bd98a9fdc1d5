import { describe, expect, it } from "vitest";
import { fisherExact } from "../stats/index.ts";
import { associate } from "./association.ts";

describe("associate", () => {
  // 40 cases: the signal present in 20, failing in 9 of them and in 3 of the 20 without it.
  const x = Float64Array.from({ length: 40 }, (_, i) => (i < 20 ? 1 : 0));
  const failed = Array.from({ length: 40 }, (_, i) => (i < 20 ? i < 9 : i < 23));
  const rows = Array.from({ length: 40 }, (_, i) => i);
  const table = [
    [9, 11],
    [3, 17],
  ];

  it("binary, independent cases, in the stated direction: Fisher's one-sided p randomized at the observed table", () => {
    const a = associate("binary", x, failed, rows, { alternative: 1, seed: 3, resamples: 50 });
    const plain = fisherExact(table, "greater");
    expect(a.test).toBe("fisherExact");
    expect(a.testDescription).toMatch(/one-sided, randomized at the observed table/);
    // P(A > 9) ≤ p ≤ P(A ≥ 9): never more than the exact p, never less than the next table's.
    expect(a.p).toBeLessThanOrEqual(plain.p);
    expect(a.p).toBeGreaterThanOrEqual(plain.p - plain.pointProbability);
    expect(associate("binary", x, failed, rows, { alternative: 1, seed: 3, resamples: 50 }).p).toBe(a.p);
  });

  it("binary, two-sided (the exploration screen): Fisher's exact p, not randomized", () => {
    const a = associate("binary", x, failed, rows, { seed: 3, resamples: 50 });
    expect(a.p).toBe(fisherExact(table).p);
    expect(a.testDescription).toBe("Fisher's exact test, two-sided; unit: case");
  });
});
