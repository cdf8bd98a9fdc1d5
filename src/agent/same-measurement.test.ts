import { describe, expect, it } from "vitest";
import { importDataset } from "../datasets/index.ts";
import { syntheticLog, toCsv } from "./bench/synthetic.ts";
import { exploreCases } from "./run-explore.ts";
import { mergeNote, sameMeasurementGroups } from "./same-measurement.ts";

describe("sameMeasurementGroups", () => {
  it("groups identical values and strictly monotone functions, up or down, keeping the first", () => {
    const p = [0.1, 0.5, 0.9, 0.5, Number.NaN];
    const groups = sameMeasurementGroups([
      { name: "p", values: p },
      { name: "other", values: [3, 1, 2, 0, Number.NaN] },
      { name: "copy", values: [...p] },
      { name: "logp", values: p.map(Math.log) },
      { name: "oneMinus", values: p.map((x) => 1 - x) },
    ]);
    expect(groups).toEqual([
      {
        kept: "p",
        merged: [
          { signal: "copy", relation: "identical" },
          { signal: "logp", relation: "same order" },
          { signal: "oneMinus", relation: "reversed order" },
        ],
      },
    ]);
  });

  it("does not group signals that differ in one tie, in which cases are missing, or that are constant", () => {
    expect(
      sameMeasurementGroups([
        { name: "a", values: [1, 2, 3, 4] },
        { name: "ties", values: [1, 1, 3, 4] }, // a monotone but not strictly: a coarser measurement, not the same one
        { name: "missing", values: [1, 2, 3, Number.NaN] },
        { name: "flat", values: [2, 2, 2, 2] },
        { name: "flat2", values: [5, 5, 5, 5] },
      ]),
    ).toEqual([]);
    expect(() => sameMeasurementGroups([{ name: 3 } as never])).toThrow(/each signal must be/);
    expect(mergeNote({ signal: "logprob.answer", relation: "same order" })).toBe(
      "logprob.answer (orders the cases the same way)",
    );
  });
});

describe("M3 merges signals that are the same measurement", () => {
  it("two identical signals (and a monotone transform of them) give one hypothesis, which says what it merged", async () => {
    const rows = syntheticLog({ seed: 11 }).rows.map((r) => ({
      ...r,
      planted_copy: r.planted!,
      planted_exp: Math.exp(Number(r.planted)),
    }));
    const { cases } = await importDataset(toCsv(rows), { name: "log.csv", mapping: { label: "passed" } });
    const { report, events } = await exploreCases(cases, { seed: 1, resamples: { explore: 100, sealed: 500 } });
    const on = report.hypotheses.filter((h) => /^planted/.test(h.signal));
    expect(on).toHaveLength(1);
    expect(on[0]!.merged).toEqual(
      expect.arrayContaining([
        { signal: expect.stringMatching(/^planted/), relation: "identical" },
        { signal: expect.stringMatching(/^planted/), relation: "same order" },
      ]),
    );
    expect(on[0]!.merged).toHaveLength(2);
    expect(on[0]!.statement).toMatch(/the same measurement as .*merged into this hypothesis/);
    // M2 still tested every one of them; only M3 counts them once.
    const tested = report.signals.tested.filter((s) => /^planted/.test(s.signal));
    expect(tested).toHaveLength(3);
    expect(new Set(tested.map((s) => s.effect.value)).size).toBe(1);
    expect(events.find((e) => e.type === "hypotheses.frozen")!.payload.merged).toHaveLength(1);
  });
});
