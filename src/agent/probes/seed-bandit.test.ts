import { describe, expect, it } from "vitest";
import { seedBandit } from "./seed-bandit.ts";

const rng = { unit: () => 0.5, below: () => 0 };

describe("seedBandit", () => {
  it("tries unvisited seeds first, then the one whose variants fail most", () => {
    const b = seedBandit(3, 0.5);
    b.record(0, true);
    b.record(1, false);
    expect(b.order(rng)[0]).toBe(2);
    b.record(2, false);
    expect(b.order(rng)[0]).toBe(0);
  });

  it("refuses a bad count and an unknown seed", () => {
    expect(() => seedBandit(0, 0.5)).toThrow(/count must be a whole number of seeds, at least 1, got 0/);
    expect(() => seedBandit(2, 0.5).record(5, true)).toThrow(/no seed 5; there are 2/);
  });
});
