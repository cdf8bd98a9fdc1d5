import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEventLines, type RunEvent } from "../../../agent/events.ts";
import {
  currentStage,
  diagnoseView,
  exploreView,
  finalVerdicts,
  probeView,
  repairView,
  stageRail,
  verifyView,
} from "./stages.ts";

/** The log `evalrx investigate --sample 200 --seed 1` wrote (its evidence images left out). */
const events = parseEventLines(readFileSync(join(import.meta.dirname, "fixtures/pope-200.events.jsonl"), "utf8"));
const upTo = (type: string): RunEvent[] => events.slice(0, events.findIndex((e) => e.type === type) + 1);

describe("stageRail", () => {
  it("follows the log: a stage runs between its started and finished events, the rest wait", () => {
    const during = upTo("probe.planned");
    expect(stageRail(during, "running").map((s) => s.state)).toEqual([
      "running",
      "waiting",
      "waiting",
      "waiting",
      "waiting",
    ]);
    expect(currentStage(stageRail(during, "running"))).toBe("M1");
    const m4 = upTo("sealed.opened");
    expect(stageRail(m4, "running").map((s) => s.state)).toEqual(["done", "done", "done", "running", "waiting"]);
    const all = stageRail(events, "finished");
    expect(all.every((s) => s.state === "done")).toBe(true);
    expect(all[0]!.ms).toBe(15304);
    expect(all[4]!.problems[0]).toMatch(/^mechanism test: no supported hypothesis/);
  });

  it("a run that ended inside a stage shows it stopped, and a finished run without M5 shows it skipped", () => {
    expect(stageRail(upTo("probe.planned"), "interrupted")[0]!.state).toBe("stopped");
    const noM5 = events.filter((e) => e.stage !== "M5");
    expect(stageRail(noM5, "finished")[4]!.state).toBe("skipped");
  });
});

describe("stage panels", () => {
  it("M1: analyzers with their findings and the label counts", () => {
    expect(probeView(upTo("probe.planned")).labels).toBeUndefined();
    const m1 = probeView(events);
    expect(m1.analyzers).toHaveLength(10);
    expect(m1.analyzers[0]).toMatchObject({ name: "attention", rank: 1, runnable: true });
    expect(m1.analyzers.find((a) => a.name === "tokenEntropy")?.summary).toMatch(/nats on failures/);
    expect(m1.labels).toEqual({ fail: 36, pass: 164 });
  });

  it("M2: signals ranked by e-value with the e-BH bar m/(α·k), untestable ones last", () => {
    const m2 = exploreView(events);
    expect(m2.tried).toBe(33);
    const ranked = m2.rows.filter((r) => Number.isFinite(r.rank));
    expect(ranked).toHaveLength(33);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1]!.e).toBeGreaterThanOrEqual(ranked[i]!.e);
    expect(ranked[0]!.ebhBar).toBeCloseTo(33 / 0.05, 9);
    expect(ranked[3]!.ebhBar).toBeCloseTo(33 / (0.05 * 4), 9);
    // e-BH over all 33 would need e ≥ 660 at rank 1: none of these exploration e-values (≈ 21 at most) clears it.
    expect(m2.ebhRejections).toBe(0);
    expect(m2.selected).toEqual(
      ranked
        .filter((r) => r.selected)
        .map((r) => r.signal)
        .sort(byOrderIn(m2.selected)),
    );
    expect(m2.untestable.map((u) => u.name)).toEqual(["meta.object", "meta.question_type"]);
    expect(m2.split).toEqual({ explore: 122, failures: 20, sealed: 78 });
  });

  it("M3: cards with direction, effect, refutation and merged measurements", () => {
    const m3 = diagnoseView(events);
    expect(m3.frozen).toBe(true);
    expect(m3.cards.map((c) => c.id)).toEqual(["H1", "H2", "H3", "H4"]);
    expect(m3.cards[0]).toMatchObject({ direction: "lower in failures", merged: [{ signal: "logprob.answer" }] });
    expect(m3.cards[0]!.refutation).toMatch(/^REFUTED if/);
    expect(m3.cards[0]!.effect.name).toBe("AUC");
  });

  it("M4: counts only until the verdicts, then each verdict", () => {
    const waiting = verifyView(upTo("hypotheses.frozen"));
    expect(waiting).toEqual({ sealed: 78, clusters: 90, opened: false, toDecide: 4, decided: [] });
    const m4 = verifyView(events);
    expect(m4.opened).toBe(true);
    expect(m4.decided.map((d) => d.verdict)).toEqual(["SUPPORTED", "SUPPORTED", "INCONCLUSIVE", "INCONCLUSIVE"]);
    expect(finalVerdicts(events)).toEqual(m4.decided.map((d) => ({ id: d.id, verdict: d.verdict })));
  });

  it("M5: each rung signed by fixed − broken, with p, e and the outcome", () => {
    const m5 = repairView(events);
    expect(m5.rungs).toHaveLength(7);
    const crop = m5.rungs.find((r) => r.candidate.startsWith("crop and re-ask"))!;
    expect(crop).toMatchObject({ fixed: 3, broken: 13, n: 78, validated: false });
    expect(crop.net).toBeCloseTo(-10 / 78, 12);
    expect(m5.outcome?.fixedBy).toBeNull();
    expect(m5.budget?.tests).toBe(7);
    expect(m5.budget?.note).toBeUndefined();
  });

  it("M5: carries the run's statement of how α was split, when it has one", () => {
    const note = "α = 0.05 over M5: the mechanism test at γ = α/2 = 0.025; the 7 candidates share the other half";
    const withNote = events.map((e) =>
      e.type === "repairs.finished"
        ? { ...e, payload: { ...e.payload, budget: { ...(e.payload["budget"] as object), note } } }
        : e,
    );
    expect(repairView(withNote).budget).toMatchObject({ tests: 7, note });
  });
});

function byOrderIn(list: readonly string[]) {
  return (a: string, b: string) => list.indexOf(a) - list.indexOf(b);
}
