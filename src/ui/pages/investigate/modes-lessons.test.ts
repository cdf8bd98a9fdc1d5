import { describe, expect, it } from "vitest";
import { EventLog } from "../../../agent/events.ts";
import { foldPanels, growthPanels, panelsKey } from "./modes-lessons.ts";

function started(): EventLog {
  const log = new EventLog({ runId: "growth", now: () => Date.UTC(2026, 11, 1) });
  log.append("setup", "run.started", { kind: "investigate", question: "Why?", seed: 1, alpha: 0.05, codeVersion: "t" });
  log.append("setup", "data.loaded", { source: "s", fingerprint: "f", n: 10, labelDistribution: { fail: 0, pass: 0 } });
  return log;
}

describe("growthPanels", () => {
  it("says what each panel will hold and when, before the run has it", () => {
    const none = growthPanels([], undefined);
    expect(none.modes.section).toBeUndefined();
    expect(none.lessons.empty).toMatch(/are read as the run sets up/);
    const log = started();
    log.append("M1", "stage.started", { stage: "M1" });
    const live = growthPanels(log.events, "running");
    expect(live.failure).toBeUndefined();
    expect(live.probes.empty).toMatch(
      /No probe search in this investigation: start one with 'Search for failing cases first'/,
    );
    expect(live.modes.empty).toMatch(/once M2 has measured them/);
    expect(live.lessons.empty).toMatch(/read no lessons store/);
    expect(growthPanels(log.events, "cancelled").modes.empty).toMatch(/stopped before M2/);
  });

  it("says of the judge-decided loop what it did: no cluster_failures call, no lessons read", () => {
    const log = new EventLog({ runId: "agentic", now: () => Date.UTC(2026, 11, 2) });
    log.append("setup", "run.started", { kind: "investigate", question: "Why?", seed: 1, agentic: { judge: "rules" } });
    log.append("M2", "stage.finished", { stage: "M2" });
    const panels = growthPanels(log.events, "finished");
    expect(panels.modes.empty).toBe("No failure modes: the judge never called cluster_failures in this run.");
    expect(panels.lessons.empty).toMatch(/^The judge-decided loop reads and leaves no lessons/);
    expect(panels.lessons.empty).not.toContain("--lessons");
    log.append("M2", "agentic.turn", { turn: 3, tool: "cluster_failures", status: "ran", modelCalls: 0 });
    expect(growthPanels(log.events, "finished").modes.empty).toMatch(/cluster_failures ran and found none/);
  });

  it("shows the report's probe-search section, saying plainly when the search could not apply", () => {
    const log = started();
    const before = panelsKey(log.events);
    log.append("setup", "problem", { what: "probe search", why: "the 5 photo questions give no object boxes" });
    expect(panelsKey(log.events)).not.toBe(before);
    const panels = growthPanels(log.events, "running");
    const note = panels.probes.section!.blocks[0]!;
    expect(note).toMatchObject({ kind: "note", tone: "warn" });
    expect(JSON.stringify(note)).toContain("Not run: ");
    expect(JSON.stringify(note)).toContain("The 5 photo questions give no object boxes.");
    // A progress event does not change what the panels read.
    log.append("M1", "progress", { done: 1 });
    expect(panelsKey(log.events)).toBe(panelsKey(log.events.slice(0, -1)));
  });

  it("draws the same panels from a fold made in an earlier task (the page folds, then builds, one task each)", () => {
    const log = started();
    log.append("setup", "problem", { what: "probe search", why: "the 5 photo questions give no object boxes" });
    log.append("M1", "stage.started", { stage: "M1" });
    const folded = foldPanels(log.events);
    expect(folded.report?.runId).toBe("growth");
    expect(growthPanels(log.events, "running", {}, folded)).toEqual(growthPanels(log.events, "running"));
    expect(foldPanels([])).toEqual({});
    // A log that does not fold says why, in the panels.
    const broken = foldPanels([{ ...log.events[0]!, payload: null as never }]);
    expect(broken.failure ?? "").toMatch(/^the report could not be folded from this log: /);
  });
});
