import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { metricIntervals } from "./metric-intervals.ts";
import { walk } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

const oneRun = [
  { metric: "pass", mean: 0.81, lo: 0.75, hi: 0.86, n: 200, method: "wilson" },
  { metric: "yesNo", mean: 0.9, lo: 0.852, hi: 0.933, n: 200, method: "wilson" },
  { metric: "exact", mean: 0.62, lo: 0.55, hi: 0.68, n: 200, method: "cluster-se" },
];

const twoRuns = [
  { metric: "pass", series: "baseline", mean: 0.81, lo: 0.75, hi: 0.86, n: 200 },
  { metric: "pass", series: "candidate", mean: 0.74, lo: 0.68, hi: 0.8, n: 200 },
  { metric: "a-metric-name-far-too-long-to-fit-beside-the-axis", series: "baseline", mean: 0.5, lo: 0.4, hi: 0.6 },
  { metric: "a-metric-name-far-too-long-to-fit-beside-the-axis", series: "candidate", mean: Number.NaN, lo: 0, hi: 1 },
];

describe("metricIntervals", () => {
  it("draws a run's metrics as the golden file says", async () => {
    const scene = metricIntervals(oneRun, { width: 640 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/metric-intervals-one-run.svg");
  });

  it("draws two runs side by side with a legend; a cut label keeps its full text as its tip", async () => {
    const scene = metricIntervals(twoRuns, { width: 560 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/metric-intervals-two-runs.svg");
    const label = [...walk(scene.children)].find((n) => n.type === "text" && n.class === "row-label" && n.tip);
    expect(label).toMatchObject({ tip: "a-metric-name-far-too-long-to-fit-beside-the-axis" });
    expect(label?.type === "text" && label.text.endsWith("…")).toBe(true);
  });

  it("drops the mark of an estimate that is not a number, and its table cell reads a dash", () => {
    const scene = metricIntervals(twoRuns, { width: 560 });
    const marks = [...walk(scene.children)].filter((n) => n.class === "mark-interval");
    expect(marks.map((m) => m.key)).toEqual([
      "baseline|pass",
      "candidate|pass",
      "baseline|a-metric-name-far-too-long-to-fit-beside-the-axis",
    ]);
    expect(scene.table.rows[3]).toEqual([
      "candidate",
      "a-metric-name-far-too-long-to-fit-beside-the-axis",
      "—",
      "[0.0%, 100.0%]",
      "—",
      "—",
    ]);
    expect(toSvg(scene)).not.toMatch(/NaN/);
  });

  it("names the argument that is wrong", () => {
    expect(() => metricIntervals("rows" as never, { width: 640 })).toThrow(
      new TypeError('metricIntervals(): rows must be an array, got "rows"'),
    );
    expect(() => metricIntervals([{ metric: 3 } as never], { width: 640 })).toThrow(
      new TypeError("metricIntervals(): rows[0].metric must be a string, got 3"),
    );
    expect(() => metricIntervals([{ metric: "pass", mean: "0.8" } as never], { width: 640 })).toThrow(
      'metricIntervals(): rows[0].mean must be a number, got "0.8"',
    );
    expect(() => metricIntervals(oneRun, { width: 100 })).toThrow(
      new RangeError("metricIntervals(): width must be a number of px ≥ 240, got 100"),
    );
  });

  it("keeps every mark inside the figure and every label escaped, whatever the rows hold", () => {
    const value = fc.oneof(fc.double({ min: -2, max: 3 }), fc.constantFrom(Number.NaN, Infinity, -Infinity, 0, 1));
    const row = fc.record({
      metric: fc.string({ maxLength: 40 }),
      series: fc.constantFrom("baseline", "candidate", "<b>&\"'", "a much longer series name than fits"),
      mean: value,
      lo: value,
      hi: value,
      n: fc.integer({ min: 0, max: 1e6 }),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), fc.integer({ min: 240, max: 1400 }), (rows, width) => {
        const scene = metricIntervals(rows, { width });
        expect(sceneProblems(scene)).toEqual([]);
        expect(svgProblems(toSvg(scene))).toEqual([]);
        expect(scene.table.rows).toHaveLength(rows.length);
      }),
      { numRuns: 150 },
    );
  });
});
