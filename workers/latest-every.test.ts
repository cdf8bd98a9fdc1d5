import { describe, expect, it } from "vitest";
import { latestEvery, type Timers } from "./latest-every.ts";

/** A clock and timers moved by hand. */
function handTimers() {
  let clock = 0;
  let due: { at: number; fn: () => void } | undefined;
  const timers: Timers = {
    now: () => clock,
    setTimeout: (fn, ms) => (due = { at: clock + ms, fn }),
    clearTimeout: () => (due = undefined),
  };
  const advance = (ms: number) => {
    clock += ms;
    if (due && due.at <= clock) {
      const { fn } = due;
      due = undefined;
      fn();
    }
  };
  return { timers, advance, pending: () => due !== undefined };
}

describe("latestEvery", () => {
  it("sends the first value at once, then at most one per window, and the last of a burst once its window passed", () => {
    const { timers, advance } = handTimers();
    const sent: number[] = [];
    const progress = latestEvery(250, (v: number) => sent.push(v), timers);
    progress.push(1);
    expect(sent).toEqual([1]);
    advance(100);
    progress.push(2);
    advance(50);
    progress.push(3);
    expect(sent).toEqual([1]); // inside the window: kept, not sent
    advance(100); // 250 ms after the first
    expect(sent).toEqual([1, 3]); // the latest, without a new push; 2 never
    advance(1000);
    progress.push(4); // the window long passed: at once
    expect(sent).toEqual([1, 3, 4]);
  });

  it("sends at once when asked (the last value of a job), and nothing after stop", () => {
    const { timers, advance, pending } = handTimers();
    const sent: string[] = [];
    const progress = latestEvery(250, (v: string) => sent.push(v), timers);
    progress.push("a");
    progress.push("b");
    progress.push("done", true);
    expect(sent).toEqual(["a", "done"]);
    expect(pending()).toBe(false);
    progress.push("late");
    progress.stop();
    advance(1000);
    expect(sent).toEqual(["a", "done"]);
  });

  it("refuses a window that is not a number ≥ 0", () => {
    expect(() => latestEvery(-1, () => undefined)).toThrow(/everyMs must be a number ≥ 0, got -1/);
  });
});
