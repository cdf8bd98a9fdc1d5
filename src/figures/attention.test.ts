import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attentionGrid } from "./attention-grid.ts";
import { attentionOverlay, OVERLAY_LEGEND_HEIGHT } from "./attention-overlay.ts";
import { walk } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

/** A 6 × 6 rollout map with its peak at row 2, column 1 (as on the demo set), and a flatter one. */
export const PEAKED = Array.from({ length: 36 }, (_, k) => (k === 6 ? 0.12 : 0.01 + ((k * 7) % 11) / 500));
export const FLAT = Array.from({ length: 36 }, (_, k) => 0.02 + ((k * 5) % 7) / 700);

describe("attentionGrid", () => {
  it("draws two maps on one colour scale as the golden file says", async () => {
    const scene = attentionGrid(
      [
        { label: "failing cases (mean rollout)", values: PEAKED },
        { label: "passing cases (mean rollout)", values: FLAT },
      ],
      { width: 720, rows: 6, cols: 6, valueLabel: "attention rollout" },
    );
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/attention-grid.svg");
    expect(scene.label).toContain("failing cases (mean rollout) peak at row 2, column 1");
    const cell = [...walk(scene.children)].find((n) =>
      n.tip?.startsWith("failing cases (mean rollout) · row 2, column 1:"),
    );
    expect(cell?.tip).toMatch(/0\.12 \(/);
    expect(scene.table.rows[6]).toEqual(["row 2, column 1", "0.12", "0.0229"]);
  });

  it("leaves a cell with no value empty instead of colouring it as 0, and names a wrong grid", () => {
    const values = [...FLAT];
    values[3] = null as never;
    const scene = attentionGrid([{ label: "m", values }], { width: 300, rows: 6, cols: 6 });
    expect([...walk(scene.children)].filter((n) => n.class === "cell")).toHaveLength(35);
    expect(() => attentionGrid([{ label: "m", values: [1, 2] }], { width: 300, rows: 6, cols: 6 })).toThrow(
      "attentionGrid(): maps[0].values must hold rows × cols = 36 values, got 2",
    );
    expect(() => attentionGrid([], { width: 300, rows: 0, cols: 6 })).toThrow(
      "attentionGrid(): rows must be a whole number",
    );
  });
});

describe("attentionOverlay", () => {
  it("draws one case's attention over its image area as the golden file says", async () => {
    const scene = attentionOverlay(PEAKED, { width: 192, rows: 6, cols: 6, label: "case pope-random-0001" });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/attention-overlay.svg");
    expect(scene.height).toBe(192 + OVERLAY_LEGEND_HEIGHT);
    expect(scene.label).toMatch(/^case pope-random-0001: attention peaks at row 2, column 1 \(/);
  });

  it("fades cells in proportion to their value, up to the opacity asked for, and covers the image area exactly", () => {
    const scene = attentionOverlay(PEAKED, { width: 120, height: 90, rows: 6, cols: 6, opacity: 0.8 });
    const cells = [...walk(scene.children)].filter((n) => n.type === "rect" && n.class === "cell");
    expect(cells).toHaveLength(36);
    const peak = cells[6]!;
    expect(peak.opacity).toBeCloseTo(0.8, 6);
    expect(cells[0]!.opacity).toBeCloseTo((0.8 * PEAKED[0]!) / 0.12, 6);
    const last = cells[35]!;
    expect(last.type === "rect" && [last.x + last.width, last.y + last.height]).toEqual([120, 90]);
    expect(attentionOverlay(PEAKED, { width: 120, rows: 6, cols: 6, opacity: 0 }).table.rows).toHaveLength(36);
    expect(() => attentionOverlay(PEAKED, { width: 120, rows: 6, cols: 6, opacity: 2 })).toThrow(
      "attentionOverlay(): opacity must lie in [0, 1], got 2",
    );
    expect(() => attentionOverlay(PEAKED, { width: 120, rows: 5, cols: 6 })).toThrow(
      "attentionOverlay(): values must hold rows × cols = 30 values, got 36",
    );
  });

  it("stays inside its viewBox for any map", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 48, max: 600 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rows, cols, width, opacity) => {
          const values = Array.from({ length: rows * cols }, (_, k) => (k % 5 === 0 ? Number.NaN : (k * 37) % 17));
          const scene = attentionOverlay(values, { width, rows, cols, opacity });
          expect(sceneProblems(scene)).toEqual([]);
          expect(svgProblems(toSvg(scene))).toEqual([]);
          const grid = attentionGrid([{ label: "<a & b>", values }], { width: Math.max(240, width), rows, cols });
          expect(sceneProblems(grid)).toEqual([]);
        },
      ),
      { numRuns: 80 },
    );
  });
});
