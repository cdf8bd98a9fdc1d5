import { scaleLinear } from "d3-scale";
import { count, percent, pointSize } from "./format.ts";
import { axisX, axisY } from "./marks/axis.ts";
import { dot } from "./marks/dot.ts";
import { line } from "./marks/line.ts";
import { ruleX, ruleY } from "./marks/rule.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { COLORS } from "./theme.ts";
import { numberField, rowsOf, shareOption, textField, widthOption } from "./validate.ts";

/** The chance of a detection at one drop (a share) or one number of cases. */
export interface PowerPoint {
  readonly x: number;
  /** Probability, 0–1. */
  readonly power: number;
}

export interface PowerCurveOptions {
  readonly width: number;
  /** What x is: the true drop (a share, drawn in points) or the number of paired cases. */
  readonly along: "drop" | "n";
  /** The power wanted (default 0.8), drawn as a dashed line; where the curve crosses it is marked. */
  readonly target?: number;
  /** A vertical marker (the tolerance, or the cases the runs have), with its label. */
  readonly marker?: { readonly at: number; readonly label: string };
  /** What computed the curve, in words (it goes into the description and the table caption). */
  readonly method: string;
}

const FN = "powerCurve";

/** Where the curve first reaches `target` (linear between the points around it), or NaN. */
function crossing(points: readonly PowerPoint[], target: number): number {
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (!(Number.isFinite(p.x) && Number.isFinite(p.power)) || p.power < target) continue;
    const q = points[i - 1];
    if (!q || !Number.isFinite(q.power) || !Number.isFinite(q.x) || q.power === p.power) return p.x;
    return q.x + ((target - q.power) * (p.x - q.x)) / (p.power - q.power);
  }
  return Number.NaN;
}

/**
 * How likely is a drop to be caught — as the true drop grows, or as cases are
 * added? The probability of detection along x (one curve through the given
 * points, sorted by x), the target power as a dashed line (80% by default)
 * and where the curve crosses it, and an optional marker (the tolerance, or
 * the cases at hand). What computed the curve is said in `method`: a
 * McNemar sample-size curve and a simulation of the gate's own rule are
 * different questions, and the figure names which one it answers.
 *
 * @example powerCurve([{ x: 0.01, power: 0.12 }, { x: 0.03, power: 0.55 }, { x: 0.05, power: 0.9 }], { width: 640, along: "drop", method: "McNemar, Connor 1987" })
 *   // { label: "Chance of detection by true drop: 80% is reached at a drop of 4.4 pts (McNemar, Connor 1987)", … }
 */
export function powerCurve(points: readonly PowerPoint[], options: PowerCurveOptions): Scene {
  const width = widthOption(FN, options?.width);
  if (options.along !== "drop" && options.along !== "n")
    throw new RangeError(`${FN}(): along must be "drop" or "n", got ${JSON.stringify(options.along)}`);
  const method = textField(FN, "method", options.method);
  const target = shareOption(FN, "target", options.target) ?? 0.8;
  const data = rowsOf<PowerPoint>(FN, "points", points)
    .map((p, i) => ({
      x: numberField(FN, `points[${i}].x`, p.x),
      power: numberField(FN, `points[${i}].power`, p.power),
    }))
    .sort((a, b) => a.x - b.x);
  const byDrop = options.along === "drop";
  const fmtX = (v: number) => (byDrop ? pointSize(v) : `${count(v)} cases`);

  const left = 48;
  const right = 20;
  const top = 24;
  const plotBottom = 190;
  const height = plotBottom + 46;
  const xs = data.map((d) => d.x).filter(Number.isFinite);
  const marker = options.marker && Number.isFinite(options.marker.at) ? options.marker : undefined;
  const xMax = Math.max(...xs, marker?.at ?? 0, byDrop ? 0.01 : 10);
  const xMin = Math.min(0, ...xs, marker?.at ?? 0);
  const x = scaleLinear([xMin, xMax], [left, width - right]).nice();
  // Probabilities lie in [0, 1]; a value outside (bad input) widens the axis rather than leaving the plot.
  const ps = data.map((d) => d.power).filter(Number.isFinite);
  const y = scaleLinear([Math.min(0, ...ps), Math.max(1, ...ps)], [plotBottom, top]);
  const at = crossing(data, target);

  const children: SceneNode[] = [
    axisY(y, left, {
      format: ".0%",
      ticks: 5,
      gridTo: width - right,
      label: "chance of detection",
      labelWidth: width / 2,
    }),
    axisX(x, plotBottom, {
      format: byDrop ? (v) => `${Math.round(v * 1e4) / 1e2}` : ",d",
      label: byDrop ? "true drop, points" : "paired cases",
      bounds: [0, width],
    }),
  ];
  const goal = ruleY(target, y, left, width - right, {
    bounds: [0, width],
    stroke: COLORS.muted,
    strokeDasharray: "4 3",
    label: `${percent(target).replace(".0%", "%")} power`,
    class: "target",
  });
  if (goal) children.push(goal);
  if (marker) {
    const m = ruleX(marker.at, x, top, plotBottom, {
      bounds: [0, width],
      stroke: COLORS.fail,
      strokeDasharray: "2 3",
      label: marker.label,
      labelAnchor: "start",
      class: "marker",
    });
    if (m) children.push(m);
  }
  const path = line(data, {
    x,
    y,
    xValue: (d) => d.x,
    yValue: (d) => d.power,
    curve: "monotone",
    stroke: COLORS.accent,
    class: "curve",
  });
  if (path) children.push(path);
  children.push(
    ...dot(data, {
      x,
      y,
      xValue: (d) => d.x,
      yValue: (d) => d.power,
      r: 3,
      fill: () => COLORS.accent,
      class: "point",
      key: (d) => String(d.x),
      tip: (d) => `${fmtX(d.x)}: ${percent(d.power)} chance of detection`,
    }),
  );
  if (Number.isFinite(at)) {
    const mark = ruleX(at, x, y(target), plotBottom, {
      stroke: COLORS.accent,
      strokeDasharray: "1 2",
      class: "crossing",
    });
    if (mark) children.push(mark);
  }
  const question = byDrop ? "Chance of detection by true drop" : "Chance of detection by number of cases";
  const reached = Number.isFinite(at)
    ? `${percent(target).replace(".0%", "%")} is reached at ${byDrop ? `a drop of ${pointSize(at)}` : `${count(Math.ceil(at))} cases`}`
    : `${percent(target).replace(".0%", "%")} is not reached on this range`;
  return {
    width,
    height,
    label: data.some((d) => Number.isFinite(d.power))
      ? `${question}: ${reached} (${method})`
      : `${question}: nothing to draw`,
    description: `${question}, computed by ${method}.`,
    children,
    table: {
      caption: `${question} (${method})`,
      columns: [
        { label: byDrop ? "True drop" : "Paired cases", align: "right" },
        { label: "Chance of detection", align: "right" },
      ],
      rows: data.map((d) => [byDrop ? pointSize(d.x) : count(d.x), percent(d.power)]),
    },
  };
}
