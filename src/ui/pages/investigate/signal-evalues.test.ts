import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEventLines } from "../../../agent/events.ts";
import type { SceneNode } from "../../../figures/scene.ts";
import { sceneProblems } from "../../../figures/testing.ts";
import { toSvg } from "../../../figures/to-svg.ts";
import { signalEvalues } from "./signal-evalues.ts";
import { exploreView } from "./stages.ts";

/** The log `evalrx investigate --sample 200 --seed 1` wrote (its evidence images left out). */
const events = parseEventLines(readFileSync(join(import.meta.dirname, "fixtures/pope-200.events.jsonl"), "utf8"));

const flat = (nodes: readonly SceneNode[]): SceneNode[] =>
  nodes.flatMap((n) => (n.type === "g" ? [n, ...flat(n.children)] : [n]));

describe("signalEvalues", () => {
  const view = exploreView(events);

  it("draws every tested signal by rank inside the figure, at any width the page gives it", () => {
    for (const width of [320, 640, 1000]) {
      const scene = signalEvalues(view, { width });
      expect(sceneProblems(scene)).toEqual([]);
      expect(toSvg(scene)).not.toMatch(/NaN|Infinity/);
    }
    const scene = signalEvalues(view, { width: 640 });
    const dots = flat(scene.children).filter((n) => n.type === "circle" && n.class === "signal");
    const ranked = view.rows.filter((r) => Number.isFinite(r.rank));
    expect(dots).toHaveLength(ranked.length);
    expect(scene.table!.rows).toHaveLength(ranked.length);
    // The screened-in signals, and only they, are marked so in the table (the colour is not alone).
    expect(scene.table!.rows.filter((r) => r[5] === "yes").map((r) => r[1])).toEqual(
      ranked.filter((r) => r.selected).map((r) => r.signal),
    );
  });

  it("gives the e-BH bar m/(α·k) at each rank, and says how many e-BH would reject", () => {
    const m = view.tried!;
    expect(view.rows[0]!.ebhBar).toBeCloseTo(m / (0.05 * 1));
    expect(view.rows[2]!.ebhBar).toBeCloseTo(m / (0.05 * 3));
    const scene = signalEvalues(view, { width: 640 });
    expect(scene.description).toContain(`e-BH over all ${m} tried would reject ${view.ebhRejections}`);
    expect(flat(scene.children).some((n) => n.type === "path" && n.class === "ebh")).toBe(true);
  });

  it("keeps the legend on its own line, above the y axis' title", () => {
    const scene = signalEvalues(view, { width: 640 });
    const nodes = flat(scene.children);
    const title = nodes.find((n) => n.type === "text" && n.class === "axis-label" && n.text.startsWith("e-value"));
    const legend = nodes.find((n) => n.type === "g" && n.class === "legend");
    if (title?.type !== "text" || legend?.type !== "g") throw new Error("no y-axis title or no legend");
    const legendYs = flat(legend.children).map((n) =>
      n.type === "text" ? n.y : n.type === "circle" ? n.cy : n.type === "line" ? n.y1 : Number.NaN,
    );
    expect(legendYs.length).toBeGreaterThan(0);
    for (const y of legendYs) expect(title.y - y).toBeGreaterThanOrEqual(14);
  });

  it("draws an empty axis (no NaN) before any signal is tested", () => {
    const scene = signalEvalues(exploreView([]), { width: 640 });
    expect(sceneProblems(scene)).toEqual([]);
    expect(toSvg(scene)).not.toMatch(/NaN/);
    expect(scene.label).toBe("e-values of 0 signals on the exploration split, by rank, with the e-BH line at α = 0.05");
  });
});
