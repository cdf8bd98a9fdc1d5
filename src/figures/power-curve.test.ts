import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { powerCurve } from "./power-curve.ts";
import { walk } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

const byDrop = [
  { x: 0.01, power: 0.11 },
  { x: 0.02, power: 0.3 },
  { x: 0.03, power: 0.55 },
  { x: 0.04, power: 0.76 },
  { x: 0.05, power: 0.9 },
  { x: 0.06, power: 0.97 },
];

describe("powerCurve", () => {
  it("draws power by true drop as the golden file says, with the 80% line and where the curve crosses it", async () => {
    const scene = powerCurve(byDrop, {
      width: 640,
      along: "drop",
      method: "McNemar sample size (Connor 1987)",
      marker: { at: 0.03, label: "tolerance 3.0 pts" },
    });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/power-curve-drop.svg");
    // 80% lies between 4 pts (76%) and 5 pts (90%): 4 + 4/14 pts.
    expect(scene.label).toBe(
      "Chance of detection by true drop: 80% is reached at a drop of 4.3 pts (McNemar sample size (Connor 1987))",
    );
  });

  it("draws power by number of cases, and says when the target is not reached", async () => {
    const scene = powerCurve(
      [
        { x: 100, power: 0.2 },
        { x: 400, power: 0.5 },
        { x: 1600, power: 0.7 },
      ],
      { width: 480, along: "n", method: "simulation of the gate", target: 0.9 },
    );
    expect(scene.label).toBe(
      "Chance of detection by number of cases: 90% is not reached on this range (simulation of the gate)",
    );
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/power-curve-n.svg");
  });

  it("breaks the line at a point that is not a number instead of drawing it at 0", () => {
    const scene = powerCurve([byDrop[0]!, { x: 0.02, power: Number.NaN }, byDrop[2]!, byDrop[3]!], {
      width: 400,
      along: "drop",
      method: "m",
    });
    const path = [...walk(scene.children)].find((n) => n.type === "path");
    expect(path?.type === "path" && path.d.split("M").length - 1).toBe(2); // two pieces
    expect([...walk(scene.children)].filter((n) => n.class === "point")).toHaveLength(3);
    expect(scene.table.rows[1]).toEqual(["2.0 pts", "—"]);
  });

  it("names the argument that is wrong", () => {
    expect(() => powerCurve(byDrop, { width: 640, along: "repeats" as never, method: "m" })).toThrow(
      new RangeError('powerCurve(): along must be "drop" or "n", got "repeats"'),
    );
    expect(() => powerCurve(byDrop, { width: 640, along: "n", method: "m", target: 80 })).toThrow(
      new RangeError("powerCurve(): target must lie strictly between 0 and 1, got 80"),
    );
    expect(() => powerCurve(byDrop, { width: 640, along: "n" } as never)).toThrow(
      "powerCurve(): method must be a string, got undefined",
    );
  });

  it("keeps every mark inside the figure, whatever the points are", () => {
    const value = fc.oneof(fc.double({ min: -10, max: 5000 }), fc.constantFrom(Number.NaN, Infinity, 0));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ x: value, power: fc.oneof(fc.double({ min: -0.5, max: 1.5 }), fc.constant(Number.NaN)) }),
          {
            maxLength: 12,
          },
        ),
        fc.constantFrom("drop", "n"),
        fc.integer({ min: 240, max: 1400 }),
        (points, along, width) => {
          const scene = powerCurve(points, {
            width,
            along: along as "drop" | "n",
            method: "m",
            marker: { at: 0.03, label: "t" },
          });
          expect(sceneProblems(scene)).toEqual([]);
          expect(svgProblems(toSvg(scene))).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
