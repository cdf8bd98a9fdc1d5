import { describe, expect, it } from "vitest";
import { nextTask, taskYielder } from "./next-task.ts";

describe("nextTask", () => {
  it("lets a task queued meanwhile run, which a loop of settled awaits never does", async () => {
    let fired = false;
    setTimeout(() => (fired = true), 0);
    let settled = 0;
    while (!fired && settled < 10_000) {
      await Promise.resolve();
      settled++;
    }
    expect(fired).toBe(false); // 10,000 microtasks later, the timer still waits
    let tasks = 0;
    while (!fired && tasks < 10_000) {
      await nextTask();
      tasks++;
    }
    expect(fired).toBe(true);
    expect(tasks).toBeLessThan(10_000);
  });
});

describe("taskYielder", () => {
  it("pauses once each budget has passed, counting from the last pause", async () => {
    let clock = 0;
    let pauses = 0;
    const breathe = taskYielder(
      25,
      () => clock,
      async () => void pauses++,
    );
    for (const t of [0, 10, 24]) {
      clock = t;
      await breathe();
    }
    expect(pauses).toBe(0);
    clock = 25;
    await breathe();
    expect(pauses).toBe(1);
    clock = 40; // 15 ms after that pause
    await breathe();
    expect(pauses).toBe(1);
    clock = 50;
    await breathe();
    expect(pauses).toBe(2);
  });

  it("refuses a budget that is not a number ≥ 0", () => {
    expect(() => taskYielder(-1)).toThrow(/budgetMs must be a number ≥ 0, got -1/);
    expect(() => taskYielder(Number.NaN)).toThrow(/got NaN/);
  });
});
