import { describe, expect, it } from "vitest";
import { EventLog } from "../../../agent/events.ts";
import { agenticView } from "./agentic-turns.ts";

describe("agenticView", () => {
  it("is undefined for the fixed pipeline and reads turns, refusals and the stop from the events", () => {
    const log = new EventLog({ runId: "r", now: () => 0 });
    expect(agenticView(log.events)).toBeUndefined();
    log.append("setup", "agentic.started", { judge: "rules", maxTurns: 20, caps: {}, tools: [], sandbox: null });
    log.append("setup", "agentic.turn", {
      turn: 1,
      tool: null,
      args: {},
      why: "",
      status: "refused",
      reason: "malformed reply: x",
      modelCalls: 0,
    });
    log.append("M1", "agentic.turn", {
      turn: 2,
      tool: "run_probe",
      args: {},
      why: "w",
      status: "ran",
      result: "60 cases",
      modelCalls: 120,
    });
    log.append("report", "agentic.stopped", {
      by: "host",
      success: false,
      summary: "turn limit",
      turns: 2,
      refused: 1,
    });
    expect(agenticView(log.events)).toEqual({
      judge: "rules",
      maxTurns: 20,
      sandbox: null,
      refused: 1,
      turns: [
        { turn: 1, tool: "(unreadable reply)", why: "", status: "refused", said: "malformed reply: x", modelCalls: 0 },
        { turn: 2, tool: "run_probe", why: "w", status: "ran", said: "60 cases", modelCalls: 120 },
      ],
      stop: { by: "host", success: false, summary: "turn limit" },
    });
  });
});
