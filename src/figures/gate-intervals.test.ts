import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareRuns, describeTest, pairedTable, syntheticRun } from "../evals/index.ts";
import { points } from "./format.ts";
import { gateIntervals, type GateIntervalRow } from "./gate-intervals.ts";
import { walk, type SceneNode } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

const judged: GateIntervalRow[] = [
  {
    metric: "pass",
    diff: -0.1,
    lo: -0.195,
    hi: 0.004,
    gated: true,
    tolerance: 0.03,
    verdict: "inconclusive",
    p: 0.125,
  },
  { metric: "yesNo", diff: -0.24, lo: -0.371, hi: -0.132, gated: true, tolerance: 0.03, verdict: "fail", p: 0.0005 },
  { metric: "exact", diff: 0.02, lo: -0.01, hi: 0.05, gated: false, p: 0.2 },
];

/** The x of the axis tick labelled `label`. */
function tickAt(nodes: readonly SceneNode[], label: string): number | undefined {
  for (const n of walk(nodes)) if (n.type === "text" && n.class === "tick-label" && n.text === label) return n.x;
  return undefined;
}

describe("gateIntervals", () => {
  it("draws judged metrics as the golden file says: the zero line, one shared −tolerance line, a verdict per row", async () => {
    const scene = gateIntervals(judged, { width: 640 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/gate-intervals.svg");
    const words = [...walk(scene.children)]
      .filter((n) => n.class === "verdict")
      .map((n) => n.type === "text" && n.text);
    expect(words).toEqual(["inconclusive", "FAIL", "exploratory"]);
  });

  it("puts the zero line at the axis' 0 and the tolerance line at −tolerance", () => {
    const scene = gateIntervals(judged, { width: 640 });
    const zero = [...walk(scene.children)].find((n) => n.class === "zero");
    const tolerance = [...walk(scene.children)].find((n) => n.class === "tolerance");
    expect(zero?.type === "line" && zero.x1).toBe(tickAt(scene.children, "0"));
    // The axis has ticks at 0 and −10 pts: −3 pts sits 3/10 of the way from 0 to −10.
    const x0 = tickAt(scene.children, "0")!;
    const x10 = tickAt(scene.children, "−10")!;
    expect(tolerance?.type === "line" && tolerance.x1).toBeCloseTo(x0 + 0.3 * (x10 - x0), 1);
  });

  it("draws one short −tolerance line per gated metric when their tolerances differ", async () => {
    const rows = judged.map((r) => (r.metric === "yesNo" ? { ...r, tolerance: 0.05 } : r));
    const scene = gateIntervals(rows, { width: 520 });
    const lines = [...walk(scene.children)].filter((n) => n.class === "tolerance");
    expect(lines.map((l) => l.tip)).toEqual(["pass: tolerance 3.0 pts", "yesNo: tolerance 5.0 pts"]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/gate-intervals-per-metric.svg");
  });

  it("draws the comparison the gate makes, from compareRuns itself", () => {
    const { a, b } = pairedTable({ both: 40, regressed: 6, fixed: 1, neither: 3 });
    const result = compareRuns(syntheticRun({ id: "base", cases: a }), syntheticRun({ id: "cand", cases: b }), {
      tolerance: { pass: 0.03 },
    });
    const scene = gateIntervals(
      result.tests.map((t) => ({ ...t, p: t.pAdjusted, test: describeTest(t) })),
      { width: 640 },
    );
    const t = result.tests[0]!;
    const interval = `[${points(t.lo)}, ${points(t.hi)}]`;
    expect(t.verdict).toBe("inconclusive");
    expect(scene.label).toBe(`pass: −10.0 pts ${interval}, tolerance 3.0 pts → inconclusive`);
    expect(scene.table.rows).toEqual([["pass", "−10.0 pts", interval, "3.0 pts", "inconclusive"]]);
  });

  it("names the argument that is wrong", () => {
    expect(() => gateIntervals({} as never, { width: 640 })).toThrow(
      new TypeError("gateIntervals(): tests must be an array, got object"),
    );
    expect(() => gateIntervals([{ ...judged[0]!, verdict: "maybe" as never }], { width: 640 })).toThrow(
      new RangeError('gateIntervals(): tests[0].verdict must be "pass", "fail" or "inconclusive", got "maybe"'),
    );
    expect(() => gateIntervals([{ ...judged[0]!, diff: null as never }], { width: 640 })).toThrow(
      "gateIntervals(): tests[0].diff must be a number, got null",
    );
  });

  it("keeps every mark inside the figure, whatever the differences are", () => {
    const value = fc.oneof(fc.double({ min: -1.5, max: 1.5 }), fc.constantFrom(Number.NaN, Infinity, -Infinity, 0));
    const row = fc.record({
      metric: fc.string({ maxLength: 30 }),
      diff: value,
      lo: value,
      hi: value,
      gated: fc.boolean(),
      tolerance: fc.oneof(fc.double({ min: 0.001, max: 0.5 }), fc.constant(Number.NaN)),
      verdict: fc.constantFrom("pass", "fail", "inconclusive", undefined),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), fc.integer({ min: 240, max: 1400 }), (rows, width) => {
        const scene = gateIntervals(rows as GateIntervalRow[], { width });
        expect(sceneProblems(scene)).toEqual([]);
        expect(svgProblems(toSvg(scene))).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});
