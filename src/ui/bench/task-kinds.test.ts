import { describe, expect, it } from "vitest";
import type { TraceEvent } from "./long-task-profile.ts";
import { kindsLine, taskKinds } from "./task-kinds.ts";

const x = (name: string, ts: number, dur: number, tid = 1): TraceEvent => ({
  name,
  ph: "X",
  pid: 7,
  tid,
  ts,
  dur,
});

describe("taskKinds", () => {
  it("counts each microsecond once, for the innermost known event around it", () => {
    // A 10 ms task: a 6 ms animation frame callback holding a 2 ms forced layout and a 1 ms GC, then 3 ms of
    // paint; 1 ms in nothing known.
    const events = [
      x("RunTask", 0, 10_000),
      x("FireAnimationFrame", 0, 6_000),
      x("FunctionCall", 500, 5_000),
      x("Layout", 1_000, 2_000),
      x("MinorGC", 4_000, 1_000),
      x("Paint", 6_500, 3_000),
      x("Layout", 0, 9_000, 2), // another thread's
    ];
    const kinds = taskKinds(events, "7:1", { ts: 0, wallMs: 10, cpuMs: 10 });
    expect(kinds).toEqual({ script: 3, layout: 2, gc: 1, paint: 3, other: 1 });
  });

  it("leaves out events of other tasks and clips one that runs past the task's end", () => {
    const events = [x("Layout", 20_000, 1_000), x("UpdateLayoutTree", 9_000, 4_000)];
    expect(taskKinds(events, "7:1", { ts: 0, wallMs: 10, cpuMs: 10 })).toEqual({ style: 1, other: 9 });
  });
});

describe("kindsLine", () => {
  it("names the kinds largest first in whole ms, and says so when nothing was traced", () => {
    expect(kindsLine({ script: 61.2, layout: 30.4, other: 0.2 })).toBe("script 61, layout 30");
    expect(kindsLine({})).toBe("nothing traced");
  });
});
