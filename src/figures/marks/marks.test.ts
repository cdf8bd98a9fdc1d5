import { scaleLinear } from "d3-scale";
import { describe, expect, it } from "vitest";
import { walk, type SceneNode } from "../scene.ts";
import { textWidth } from "../text-width.ts";
import { axisX, axisY } from "./axis.ts";
import { barY } from "./bar.ts";
import { dot } from "./dot.ts";
import { intervalX } from "./interval.ts";
import { line } from "./line.ts";
import { ruleX, ruleY } from "./rule.ts";
import { text } from "./text.ts";

const labels = (nodes: readonly SceneNode[]) =>
  [...walk(nodes)]
    .filter((n) => n.type === "text" && n.class === "tick-label")
    .map((n) => (n.type === "text" ? n.text : ""));

describe("marks", () => {
  it("axisX puts ticks where scale.ticks() says, labelled by its tickFormat, thinned until labels do not touch", () => {
    const x = scaleLinear([0, 1], [40, 600]);
    const wide = axisX(x, 100, { format: ".0%", label: "pass rate" });
    expect(labels([wide])).toEqual(x.ticks(6).map(x.tickFormat(6, ".0%")));
    const narrow = axisX(scaleLinear([0, 1], [40, 120]), 100, { format: ".0%", ticks: 10 });
    const xs = [...walk([narrow])]
      .filter((n) => n.type === "text" && n.class === "tick-label")
      .map((n) => (n.type === "text" ? n.x : 0));
    for (let i = 1; i < xs.length; i++) expect(xs[i]! - xs[i - 1]!).toBeGreaterThan(textWidth("100%", 11));
    expect(
      axisY(scaleLinear([0, 1], [160, 10]), 48, { format: ".0%" }).children.some((n) => n.class === "domain"),
    ).toBe(true);
  });

  it("axes of a degenerate scale draw a domain line and no ticks", () => {
    expect(labels([axisX(scaleLinear([0.5, 0.5], [40, 600]), 100)])).toEqual([]);
  });

  it("rules sit at their value, and are left out when it is not finite", () => {
    const x = scaleLinear([-0.1, 0.1], [0, 200]);
    expect(ruleX(0, x, 0, 50)).toMatchObject({ type: "line", x1: 100, x2: 100 });
    expect(ruleX(Number.NaN, x, 0, 50)).toBeUndefined();
    expect(ruleY(0.8, scaleLinear([0, 1], [100, 0]), 0, 200, { label: "80%" })).toMatchObject({ type: "g" });
    const label = ruleX(-0.1, x, 10, 50, { label: "a label wider than the room left of it", labelAnchor: "end" });
    const t = label?.type === "g" ? label.children.find((n) => n.type === "text") : undefined;
    expect(t).toMatchObject({ x: 0, anchor: "start" }); // set flush with the left edge instead of running off it
  });

  it("intervals drop a datum with no estimate and keep the dot of one with no bounds", () => {
    const x = scaleLinear([0, 1], [0, 100]);
    const marks = intervalX(
      [
        { m: 0.5, lo: 0.4, hi: 0.6 },
        { m: Number.NaN, lo: 0.4, hi: 0.6 },
        { m: 0.5, lo: Number.NaN, hi: 0.6 },
      ],
      { x, y: (_, i) => 10 + i * 20, lo: (d) => d.lo, hi: (d) => d.hi, mid: (d) => d.m, tip: (d) => `at ${d.m}` },
    );
    expect(marks.map((g) => g.children.map((c) => c.class))).toEqual([
      ["interval", "cap", "cap", "estimate"],
      ["estimate"],
    ]);
    expect(marks.map((g) => g.tip)).toEqual(["at 0.5", "at 0.5"]);
  });

  it("dots and bars leave out what is not finite; a line breaks there", () => {
    const s = scaleLinear([0, 10], [0, 100]);
    const data = [1, Number.NaN, 3, 4];
    expect(dot(data, { x: s, y: s, xValue: (d) => d, yValue: (d) => d })).toHaveLength(3);
    expect(barY(data, { x: (d) => d * 10, width: 5, y: s, value: (d) => d })).toHaveLength(3);
    const path = line(data, { x: s, y: s, xValue: (_, i) => i, yValue: (d) => d });
    expect(path?.d).toBe("M0,10ZM20,30L30,40");
    expect(line([Number.NaN], { x: s, y: s, xValue: (d) => d, yValue: (d) => d })).toBeUndefined();
  });

  it("text cuts a label that does not fit and keeps it whole in the tip", () => {
    const [cut, fits] = text(["a very long metric name indeed", "pass"], {
      x: () => 0,
      y: (_, i) => i * 10,
      text: (d) => d,
      maxWidth: 60,
    });
    expect(cut).toMatchObject({ tip: "a very long metric name indeed" });
    expect(cut!.text.endsWith("…")).toBe(true);
    expect(fits).not.toHaveProperty("tip");
  });
});
