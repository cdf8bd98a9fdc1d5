import { describe, expect, it } from "vitest";
import { EventLog } from "./events.ts";
import { netLine, stageLine } from "./progress.ts";

describe("stageLine: the CLI's repair lines", () => {
  it("give each repair the chart's sign: (fixed − broken) / n, harms below zero, helps above", () => {
    const log = new EventLog({ runId: "r", now: () => 0 });
    const crop = log.append("M5", "repair.tested", {
      tier: "L2",
      candidate: "crop and re-ask",
      n: 210,
      fixed: 8,
      broken: 28,
      delta: 20 / 210, // the failure rate's change: positive when it got worse
      p: 0.992,
      e: 0,
      validated: false,
    });
    expect(stageLine(crop)).toBe(
      "  ✗ L2 crop and re-ask: net −9.5 pts: harms (fixed 8, broken 28 of 210) p=0.992 e=0.00 vs baseline",
    );
    expect(netLine(14, 2, 210)).toBe("net +5.7 pts: helps (fixed 14, broken 2 of 210)");
    expect(netLine(0, 0, 210)).toBe("net 0 pts: no change (fixed 0, broken 0 of 210)");
    expect(netLine(0, 0, 0)).toBe("net —: not measured (fixed 0, broken 0 of 0)");
  });
});
