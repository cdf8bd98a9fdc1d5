import { describe, expect, it } from "vitest";
import { inSlices, revealWithin } from "./slices.ts";

/** A clock each step advances by the ms it is said to take. */
function clock() {
  let t = 0;
  return { now: () => t, spend: (ms: number) => (t += ms) };
}

describe("inSlices", () => {
  it("builds as many steps per task as fit in the budget, pausing before the first and between slices", async () => {
    const c = clock();
    const pauses: number[] = [];
    const steps = [4, 4, 4, 4, 4, 1].map((ms, i) => () => (c.spend(ms), i));
    const out = await inSlices(steps, 10, async () => void pauses.push(c.now()), undefined, c.now);
    expect(out).toEqual([0, 1, 2, 3, 4, 5]);
    // A pause first; then 4 + 4 + 4 = 12 ms ≥ 10 → pause; then the next three.
    expect(pauses).toEqual([0, 12]);
  });

  it("gives one task per step when each step alone overruns the budget (as the old one-section-per-task build)", async () => {
    const c = clock();
    let pauses = 0;
    const steps = [30, 30, 30].map((ms) => () => c.spend(ms));
    await inSlices(steps, 10, async () => void pauses++, undefined, c.now);
    expect(pauses).toBe(3);
  });

  it("stops after a pause when the build is no longer wanted", async () => {
    let wanted = true;
    const c = clock();
    const built: number[] = [];
    const steps = [20, 20, 20].map((ms, i) => () => (c.spend(ms), built.push(i)));
    const out = await inSlices(
      steps,
      10,
      async () => void (wanted = built.length < 1),
      () => wanted,
      c.now,
    );
    expect(out).toBeUndefined();
    expect(built).toEqual([0]);
  });

  it("refuses a budget that is not a positive number of ms", async () => {
    await expect(inSlices([], 0, async () => {})).rejects.toThrow(/budgetMs must be a positive number/);
  });
});

describe("revealWithin", () => {
  it("reveals items while the frame's budget lasts, and at least one", () => {
    const c = clock();
    const revealed: number[] = [];
    const n = revealWithin(1, 14, 10, (k) => (revealed.push(k), c.spend(3)), c.now);
    expect(n).toBe(5); // 2, 3, 4 take 9 ms; the 4th reveal (5) reaches 12 ms and ends the frame
    expect(revealed).toEqual([2, 3, 4, 5]);
    expect(revealWithin(5, 14, 10, () => c.spend(50), c.now)).toBe(6);
  });

  it("reveals nothing past the end", () => {
    expect(revealWithin(3, 3, 10, () => {})).toBe(3);
    expect(() => revealWithin(0, 3, Number.NaN, () => {})).toThrow(/budgetMs must be a positive number/);
  });
});
