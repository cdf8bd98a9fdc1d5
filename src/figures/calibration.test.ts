import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { calibrate, syntheticRun } from "../evals/index.ts";
import { calibration } from "./calibration.ts";
import { walk } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

const rows = [
  { repeats: 1, tolerance: 0.071, aaPassAtTarget: 0.61 },
  { repeats: 2, tolerance: 0.045, aaPassAtTarget: 0.83 },
  { repeats: 3, tolerance: 0.028, aaPassAtTarget: 0.96 },
  { repeats: 5, tolerance: 0.019, aaPassAtTarget: 0.99 },
];

describe("calibration", () => {
  it("draws the noise floor by repeats as the golden file says, the recommended bar marked in words too", async () => {
    const scene = calibration(rows, { width: 640, target: 0.03, recommended: 3 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/calibration.svg");
    expect(scene.label).toBe("A/A noise floor by repeats: 3 repeats reach the target 3.0 pts (noise floor 2.8 pts)");
    const recommended = [...walk(scene.children)].filter((n) => n.class === "bar recommended");
    expect(recommended.map((n) => n.tip)).toEqual([
      "3 repeats: A/A noise floor 2.8 pts; 96.0% of A/A pairs pass at 3.0 pts (recommended)",
    ]);
    expect(scene.table.rows[2]).toEqual(["3", "2.8 pts", "96.0%", "yes"]);
  });

  it("says when no number of repeats reaches the target", () => {
    const scene = calibration(rows, { width: 400, target: 0.01, recommended: null });
    expect(scene.label).toBe("A/A noise floor by repeats: no tabulated number of repeats reaches the target 1.0 pts");
    expect([...walk(scene.children)].some((n) => n.class === "bar recommended")).toBe(false);
  });

  it("draws what calibrate returns", () => {
    const flaky = (id: string, seed: number) =>
      syntheticRun({
        id,
        cases: Array.from({ length: 60 }, (_, i) => ({ id: `c${i}`, pass: [(i * 7 + seed) % 5 !== 0 ? 1 : 0] })),
      });
    const result = calibrate([flaky("a", 0), flaky("b", 1), flaky("c", 2)], { target: 0.1, simulations: 20 });
    const scene = calibration(result.rows, {
      width: 640,
      target: result.target,
      recommended: result.recommendedRepeats,
    });
    expect(sceneProblems(scene)).toEqual([]);
    expect(scene.table.rows.map((r) => r[0])).toEqual(result.rows.map((r) => String(r.repeats)));
  });

  it("names the argument that is wrong", () => {
    expect(() => calibration([{ repeats: 0, tolerance: 0.1 }], { width: 640 })).toThrow(
      new RangeError("calibration(): rows[0].repeats must be a positive integer, got 0"),
    );
    expect(() => calibration(rows, { width: 640, target: 0 })).toThrow(
      "calibration(): target must lie strictly between 0 and 1, got 0",
    );
  });

  it("keeps every mark inside the figure, whatever the rows hold", () => {
    const row = fc.record({
      repeats: fc.integer({ min: 1, max: 50 }),
      tolerance: fc.oneof(fc.double({ min: -0.2, max: 1.5 }), fc.constant(Number.NaN)),
      aaPassAtTarget: fc.oneof(fc.double({ min: 0, max: 1 }), fc.constant(Number.NaN)),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(row, { maxLength: 8, selector: (r) => r.repeats }),
        fc.integer({ min: 240, max: 1400 }),
        (data, width) => {
          const scene = calibration(data, { width, target: 0.03, recommended: data[0]?.repeats ?? null });
          expect(sceneProblems(scene)).toEqual([]);
          expect(svgProblems(toSvg(scene))).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
