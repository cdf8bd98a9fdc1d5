import { describe, expect, it } from "vitest";
import { EventLog } from "./events.ts";
import { testMechanism } from "./mechanism-test.ts";
import type { RepairContext } from "./repair.ts";

const h = { id: "H1", signal: "attention.imageShare.mean", direction: -1 as const, mechanism: "looks away" };
const empty = { cases: [], baseline: new Map<string, boolean>(), baselineOutputs: new Map<string, string>() };
const notes = { eMethod: "γ = α/2", cases: "none" };

describe("testMechanism (input checks; the test itself runs in planted.test.ts and investigate-agentic.test.ts)", () => {
  it("names a γ outside (0, 1)", async () => {
    await expect(testMechanism({} as RepairContext, h, empty, 0, new EventLog({ runId: "r" }), notes)).rejects.toThrow(
      "testMechanism(): gamma must lie in (0, 1), got 0",
    );
  });
  it("refuses an empty set of M5 cases before any model call", async () => {
    await expect(
      testMechanism({} as RepairContext, h, empty, 0.025, new EventLog({ runId: "r" }), notes),
    ).rejects.toThrow("testMechanism(): cases must hold at least one M5 case, got 0");
  });
});
