import { describe, expect, it } from "vitest";
import { EventLog } from "../events.ts";
import { runLoop } from "../loop.ts";
import { plantedModes } from "./planted-modes.ts";
import { MODE_COLUMN, NO_MODE } from "./mode-loop.ts";

/** The planted table (two failure modes) with its signals as columns, as M1 hands them to the loop. */
function plantedTable(seed: number) {
  const { table, truth } = plantedModes({ seed, cases: 600, modeSizes: [60, 60] });
  return { table, truth };
}

describe("failure modes in the loop (M2 → M3 → M4)", () => {
  it("finds the planted modes on the exploration split, states each as a hypothesis, decided on the sealed split", async () => {
    const { table, truth } = plantedTable(3);
    const log = new EventLog({ runId: "modes-1", now: () => 0 });
    const loop = await runLoop(table, log, {
      protocol: { question: "What predicts failure?" },
      seed: 1,
      modes: true,
      resamples: { explore: 100, sealed: 300 },
    });
    const found = log.find("modes.found")!;
    expect(found.payload.k).toBe(2);
    expect(String(found.payload.why)).toMatch(/gap statistic/);
    const modeHs = loop.hypotheses.filter((h) => h.column === MODE_COLUMN);
    expect(modeHs.map((h) => h.signal)).toEqual(["mode=mode-1", "mode=mode-2"]);
    // Each mode is named by its planted signal.
    const defining = (found.payload.modes as { defining: { signal: string }[] }[]).map((m) => m.defining[0]!.signal);
    expect(defining.sort()).toEqual(["attention.imageShare", "uncertainty.entropy"]);
    // Decided on the sealed split like any hypothesis: the planted modes fail more there too. (Their circular
    // exploration evidence gives them the least share of α beside the planted signals' own hypotheses.)
    for (const h of modeHs) {
      const v = loop.verified.find((x) => x.id === h.id)!;
      expect(v.association.p).toBeLessThan(0.001);
      expect(v.association.observedDirection).toBe(1);
      expect(v.verdict).not.toBe("REFUTED");
      expect(v.association.n).toBeGreaterThan(200);
    }
    // Each mode is (almost) one planted mode: at least 90% of its members share one planted truth.
    const byId = new Map(table.ids.map((id, i) => [id, truth[i]!]));
    for (const m of found.payload.modes as { caseIds: string[] }[]) {
      const counts = new Map<string, number>();
      for (const id of m.caseIds) counts.set(byId.get(id)!, (counts.get(byId.get(id)!) ?? 0) + 1);
      expect(Math.max(...counts.values()) / m.caseIds.length).toBeGreaterThanOrEqual(0.9);
    }
  });

  it("keeps the sealed split sealed: modes come from exploration cases only, and sealed cases are placed only after the freeze", async () => {
    const { table } = plantedTable(5);
    const log = new EventLog({ runId: "modes-2", now: () => 0 });
    const loop = await runLoop(table, log, {
      protocol: { question: "What predicts failure?" },
      seed: 2,
      modes: true,
      resamples: { explore: 100, sealed: 300 },
    });
    const explorationIds = new Set(loop.explore.ids);
    const found = log.find("modes.found")!;
    const named = (found.payload.modes as { caseIds: string[]; representatives: string[] }[]).flatMap((m) => [
      ...m.caseIds,
      ...m.representatives,
    ]);
    expect(named.length).toBeGreaterThan(0);
    for (const id of named) expect(explorationIds.has(id)).toBe(true);
    const seq = (type: string) => log.find(type)!.seq;
    expect(seq("modes.found")).toBeLessThan(seq("hypotheses.frozen"));
    expect(seq("hypotheses.frozen")).toBeLessThan(seq("sealed.opened"));
    expect(seq("sealed.opened")).toBeLessThan(seq("modes.placed"));
    // The exploration table carries each case's mode; the sealed guard still refuses before a freeze.
    expect(new Set(loop.explore.columns.get(MODE_COLUMN))).toEqual(new Set(["mode-1", "mode-2", NO_MODE]));
    const fresh = new EventLog({ runId: "modes-3" });
    const { SealedSplit } = await import("../sealed.ts");
    expect(() => new SealedSplit(table, [0, 1], fresh).open("M4")).toThrow(/before the hypotheses were frozen/);
  });

  it("with no signal through the screen, the modes alone share α and are SUPPORTED on the sealed split", async () => {
    const { table } = plantedTable(3);
    const log = new EventLog({ runId: "modes-5", now: () => 0 });
    const loop = await runLoop(table, log, {
      protocol: { question: "What predicts failure?" },
      seed: 1,
      modes: true,
      screen: { maxP: 1e-300 },
      resamples: { explore: 100, sealed: 300 },
    });
    expect(loop.hypotheses.map((h) => h.signal)).toEqual(["mode=mode-1", "mode=mode-2"]);
    expect(loop.verified.map((v) => v.verdict)).toEqual(["SUPPORTED", "SUPPORTED"]);
  });

  it("off unless asked: no modes.found and no mode hypothesis", async () => {
    const { table } = plantedTable(7);
    const log = new EventLog({ runId: "modes-4", now: () => 0 });
    const loop = await runLoop(table, log, {
      protocol: { question: "What predicts failure?" },
      seed: 1,
      resamples: { explore: 100, sealed: 300 },
    });
    expect(log.find("modes.found")).toBeUndefined();
    expect(loop.hypotheses.some((h) => h.column === MODE_COLUMN)).toBe(false);
  });
});
