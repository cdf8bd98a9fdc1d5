import { describe, expect, it } from "vitest";
import { warmUntilSteady } from "./warm-up.ts";

/** A batch function whose medians follow `medians`, then stay at the last one. */
const batches = (medians: readonly number[]) => {
  let i = 0;
  return async () => {
    const m = medians[Math.min(i++, medians.length - 1)]!;
    return [m * 0.9, m, m * 1.1];
  };
};

describe("warmUntilSteady", () => {
  it("runs batches until the last three agree within 5%", async () => {
    const warm = await warmUntilSteady(batches([6, 4, 3, 2.5, 2.45, 2.5]));
    expect(warm).toEqual({ batches: 6, firstMs: 6, steadyMs: 2.5 });
  });

  it("does not take a batch slowed by the compiler for the steady speed", async () => {
    // Faster, then slower while the optimising tier compiles beside it, then steady.
    const warm = await warmUntilSteady(batches([3.9, 7.3, 7.2, 4.0, 2.2, 2.25, 2.2]));
    expect(warm).toEqual({ batches: 7, firstMs: 3.9, steadyMs: 2.2 });
  });

  it("stops after maxBatches when the speed never holds still", async () => {
    const never = await warmUntilSteady(batches([10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0.5]), { maxBatches: 6 });
    expect(never).toEqual({ batches: 6, firstMs: 10, steadyMs: 5 });
  });

  it("refuses bad options and empty batches", async () => {
    await expect(warmUntilSteady(batches([1]), { window: 0 })).rejects.toThrow(/window/);
    await expect(warmUntilSteady(batches([1]), { tolerance: -1 })).rejects.toThrow(/tolerance/);
    await expect(warmUntilSteady(async () => [])).rejects.toThrow(/no calls/);
  });
});
