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
      reply: "1 1 6 1 6",
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
      analyses: [],
      turns: [
        { turn: 1, tool: "(unreadable reply)", why: "", status: "refused", said: "malformed reply: x", modelCalls: 0 },
        { turn: 2, tool: "run_probe", why: "w", status: "ran", said: "60 cases", modelCalls: 120 },
      ],
      stop: { by: "host", success: false, summary: "turn limit" },
    });
  });

  it("lists each analysis with its outcome, notes and figure specs as they came", () => {
    const log = new EventLog({ runId: "r", now: () => 0 });
    log.append("setup", "agentic.started", {
      judge: "rules",
      maxTurns: 20,
      caps: {},
      tools: [],
      sandbox: "page worker",
    });
    // A judge that could not answer left no reply to show.
    log.append("setup", "agentic.turn", {
      turn: 1,
      tool: null,
      args: {},
      why: "",
      status: "refused",
      reason: "the judge could not answer: HTTP 503",
      modelCalls: 0,
    });
    expect(agenticView(log.events)!.turns[0]).toMatchObject({
      tool: "(no reply)",
      said: "the judge could not answer: HTTP 503",
    });
    const figure = { kind: "bar", title: "d", x: ["a"], y: [0.4] };
    log.append("M2", "analysis.ran", {
      id: "A1",
      author: "judge",
      purpose: "standardized differences",
      code: "return {}",
      input: { fingerprint: "f", n: 40 },
      runtime: "page worker",
      ok: true,
      ms: 12,
      output: { tables: [{}, {}], figures: [figure, { kind: "pie" }], notes: ["12 signals compared"], suggestions: [] },
    });
    log.append("M2", "analysis.ran", {
      id: "A2",
      author: "judge",
      purpose: "",
      code: "while (true) {}",
      input: { fingerprint: "f", n: 40 },
      runtime: "page worker",
      ok: false,
      reason: "time",
      error: "stopped: the analysis ran past its time budget of 2000 ms",
      ms: 2003,
    });
    expect(agenticView(log.events)!.analyses).toEqual([
      {
        id: "A1",
        purpose: "standardized differences",
        ok: true,
        outcome: "ran in 12 ms",
        notes: ["12 signals compared"],
        figures: [figure, { kind: "pie" }],
        tables: 2,
      },
      {
        id: "A2",
        purpose: "",
        ok: false,
        outcome: "time after 2003 ms: stopped: the analysis ran past its time budget of 2000 ms",
        notes: [],
        figures: [],
        tables: 0,
      },
    ]);
  });
});
