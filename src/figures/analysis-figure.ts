import { scaleBand, scaleLinear, scalePoint } from "d3-scale";
import {
  ANALYSIS_FIGURE_BOUNDS,
  analysisFigureTable,
  checkAnalysisFigureSpec,
  specError,
  type AnalysisFigureSpec,
} from "./analysis-figure-spec.ts";
import { count, decimal } from "./format.ts";
import { axisX, axisY } from "./marks/axis.ts";
import { barX } from "./marks/bar-x.ts";
import { dot } from "./marks/dot.ts";
import { labelledRows, rowBands, rowLabels } from "./marks/labelled-rows.ts";
import { line } from "./marks/line.ts";
import { ruleX, ruleY } from "./marks/rule.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { fitText, textWidth } from "./text-width.ts";
import { COLORS, TYPE } from "./theme.ts";
import { widthOption } from "./validate.ts";

export interface AnalysisFigureOptions {
  /** Width in px (the height follows from the kind and, for bars, their number). */
  readonly width: number;
  /** Where the spec sits, for the messages: e.g. "A1 figures[0]" (default "figure"). */
  readonly path?: string;
}

const FN = "analysisFigure";
/** Points beyond which a scatter's dots carry no tip each (the table has every value; 10,000 tips would not help). */
const TIPPED = 2_000;

/** A value as a category's name: a number as written, a string as it came (fitted where drawn). */
const nameOf = (v: number | string): string => (typeof v === "number" ? String(v) : v);

/** The same text cut to `room` px, with its full text as the tip when cut. */
function label(
  at: { x: number; y: number },
  full: string,
  room: number,
  extra: Partial<Pick<Extract<SceneNode, { type: "text" }>, "anchor" | "baseline" | "class" | "fill">> = {},
): SceneNode {
  const fitted = fitText(full, Math.max(8, room), TYPE.small);
  return {
    type: "text",
    class: extra.class ?? "tick-label",
    x: at.x,
    y: at.y,
    text: fitted.text,
    anchor: extra.anchor ?? "middle",
    baseline: extra.baseline ?? "hanging",
    fill: extra.fill ?? COLORS.muted,
    ...(fitted.cut ? { tip: full } : {}),
  };
}

/** A value axis' extent with room at the ends, never empty: [lo, hi] from the values and zero when asked. */
function extent(values: readonly number[], withZero: boolean): [number, number] {
  let lo = Math.min(...values, ...(withZero ? [0] : []));
  let hi = Math.max(...values, ...(withZero ? [0] : []));
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
  // Values that do not differ at the scale of 1 (or all but 0, as 1e-300 is) get a span that can be ticked.
  const size = Math.max(Math.abs(lo), Math.abs(hi));
  if (hi - lo < 1e-12 * Math.max(1, size)) {
    const pad = size >= 1e-100 ? size * 0.5 : 1;
    [lo, hi] = withZero && lo >= 0 ? [0, hi + pad] : [lo - pad, hi + pad];
  }
  return [lo, hi];
}

/** The left margin a vertical value axis needs for its tick labels. */
function leftMargin(y: ReturnType<typeof scaleLinear<number, number>>, width: number): number {
  const f = y.tickFormat(5);
  const widest = Math.max(0, ...y.ticks(5).map((v) => textWidth(f(v), TYPE.small)));
  return Math.min(width * 0.3, Math.max(40, widest + 14));
}

/** Category names under a horizontal axis, each cut to the room it has (its full name is its tip). */
function categoryAxis(names: readonly string[], xs: readonly number[], room: number, y: number): SceneNode {
  const children: SceneNode[] = [];
  names.forEach((name, i) => {
    children.push({ type: "line", class: "tick", x1: xs[i]!, y1: y, x2: xs[i]!, y2: y + 4, stroke: COLORS.faint });
    children.push(label({ x: xs[i]!, y: y + 6 }, name, room - 4));
  });
  return { type: "g", class: "axis axis-x categories", children };
}

/** The axis title under a horizontal axis. */
function xTitle(text: string, x0: number, x1: number, y: number): SceneNode {
  const fitted = fitText(text, x1 - x0, TYPE.title);
  return {
    type: "text",
    class: "axis-label",
    x: (x0 + x1) / 2,
    y,
    text: fitted.text,
    anchor: "middle",
    baseline: "hanging",
    size: TYPE.title,
    fill: COLORS.muted,
    ...(fitted.cut ? { tip: text } : {}),
  };
}

function tooMany(path: string, kind: string, n: number, what: string): TypeError {
  return specError(
    FN,
    `${path}.x`,
    `at most ${ANALYSIS_FIGURE_BOUNDS.categories} ${what} for a ${kind} figure (each is named on the figure; more can be drawn as a histogram or a scatter)`,
    `${count(n)}`,
  );
}

/** Horizontal bars, one per category, from zero: labels on the left, the value at each bar's end. */
function bars(spec: AnalysisFigureSpec, width: number, path: string): { children: SceneNode[]; height: number } {
  const n = spec.x.length;
  if (n > ANALYSIS_FIGURE_BOUNDS.categories) throw tooMany(path, "bar", n, "bars");
  const names = spec.x.map(nameOf);
  const labelWidth = Math.min(
    width * 0.34,
    Math.max(60, ...names.map((s) => Math.min(textWidth(s, TYPE.label) / 0.88 + 10, 240))),
  );
  const children: SceneNode[] = [];
  const top = spec.xLabel ? 24 : 8;
  if (spec.xLabel)
    children.push(label({ x: 0, y: 10 }, spec.xLabel, labelWidth, { anchor: "start", baseline: "middle" }));
  const { rows, bottom } = labelledRows(
    spec.y.map((v, i) => ({ v, name: names[i]! })),
    { label: (d) => d.name, width: labelWidth, top, maxLines: 2, minHeight: 24, padding: 8 },
  );
  const [lo, hi] = extent(spec.y, true);
  // Room past each end for the widest value written there, so no value runs off the figure.
  const widest = (side: number) =>
    Math.max(0, ...spec.y.filter((v) => Math.sign(v) === side).map((v) => textWidth(decimal(v), TYPE.small) + 6));
  const x = scaleLinear([lo, hi], [labelWidth + 8 + widest(-1), width - 8 - widest(1)]).nice(6);
  children.push(...rowBands(rows, width));
  children.push(axisX(x, bottom, { ticks: 6, gridTo: top - 4, bounds: [labelWidth, width] }));
  const zero = ruleX(0, x, top - 4, bottom, { stroke: COLORS.text, class: "zero-line" });
  if (zero) children.push(zero);
  children.push(...rowLabels(rows));
  const what = spec.yLabel ?? "value";
  for (const r of rows) {
    const h = Math.min(16, r.height - 8);
    children.push(
      ...barX([r.datum], {
        x,
        value: (d) => d.v,
        y: () => r.mid - h / 2,
        height: h,
        fill: () => COLORS.accent,
        key: () => `bar-${rows.indexOf(r)}`,
        tip: (d) => `${d.name}: ${what} ${decimal(d.v)}`,
      }),
    );
    const end = x(r.datum.v);
    children.push({
      type: "text",
      class: "value",
      x: r.datum.v < 0 ? end - 4 : end + 4,
      y: r.mid,
      text: decimal(r.datum.v),
      anchor: r.datum.v < 0 ? "end" : "start",
      baseline: "middle",
      fill: COLORS.text,
    });
  }
  if (spec.yLabel) children.push(xTitle(spec.yLabel, labelWidth + 8, width - 12, bottom + 22));
  return { children, height: bottom + (spec.yLabel ? 44 : 28) };
}

/** The plot area of a figure with a vertical value axis: margins from the ticks, a height from the width. */
function frame(width: number, ys: readonly number[], withZero: boolean, yLabel: boolean) {
  // The y axis' title sits above its top tick label.
  const top = yLabel ? 34 : 14;
  const plotBottom = top + Math.round(Math.min(260, Math.max(160, width * 0.3)));
  const y = scaleLinear(extent(ys, withZero), [plotBottom, top]).nice(5);
  const left = leftMargin(y, width);
  return { top, plotBottom, y, left, right: width - 16 };
}

function yAxis(f: ReturnType<typeof frame>, spec: AnalysisFigureSpec, width: number): SceneNode {
  return axisY(f.y, f.left, {
    ticks: 5,
    gridTo: f.right,
    ...(spec.yLabel ? { label: spec.yLabel, labelWidth: width - 8 } : {}),
  });
}

function numbersOf(spec: AnalysisFigureSpec, path: string, why: string): number[] {
  return spec.x.map((v, i) => {
    if (typeof v !== "number") throw specError(FN, `${path}.x[${i}]`, `a number ${why}`, JSON.stringify(v));
    return v;
  });
}

/** Points at (x, y). */
function scatter(spec: AnalysisFigureSpec, width: number, path: string): { children: SceneNode[]; height: number } {
  const xs = numbersOf(spec, path, "(a scatter places each point by its x)");
  const f = frame(width, spec.y, false, spec.yLabel !== undefined);
  // Inset from the y axis, so a point at the domain's edge is not drawn on the axis line.
  const x = scaleLinear(extent(xs, false), [f.left + 8, f.right]).nice(6);
  const n = xs.length;
  const points = xs.map((v, i) => ({ x: v, y: spec.y[i]!, i }));
  const xName = spec.xLabel ?? "x";
  const yName = spec.yLabel ?? "y";
  const children: SceneNode[] = [
    yAxis(f, spec, width),
    axisX(x, f.plotBottom, { ticks: 6, bounds: [0, width] }),
    // Dense points are smaller and see-through, so where they pile up still reads as more.
    ...dot(points, {
      x,
      y: f.y,
      xValue: (d) => d.x,
      yValue: (d) => d.y,
      r: n > TIPPED ? 1.6 : n > 200 ? 2.4 : 3.5,
      fill: () => COLORS.accent,
      class: "point",
      ...(n <= TIPPED
        ? { tip: (d) => `${xName} ${decimal(d.x)}, ${yName} ${decimal(d.y)}`, key: (d) => `p${d.i}` }
        : {}),
    }).map((c) => (n > 200 ? { ...c, opacity: 0.6 } : c)),
  ];
  if (spec.xLabel) children.push(xTitle(spec.xLabel, f.left, f.right, f.plotBottom + 22));
  return { children, height: f.plotBottom + (spec.xLabel ? 44 : 28) };
}

/** A line through the points in x order (numbers), or through categories in the order given. */
function lineFigure(spec: AnalysisFigureSpec, width: number, path: string): { children: SceneNode[]; height: number } {
  const f = frame(width, spec.y, false, spec.yLabel !== undefined);
  const numeric = spec.x.every((v) => typeof v === "number");
  const n = spec.x.length;
  const xName = spec.xLabel ?? "x";
  const yName = spec.yLabel ?? "y";
  const children: SceneNode[] = [yAxis(f, spec, width)];
  let points: { x: number; y: number; name: string; i: number }[];
  let position: (v: number) => number;
  if (numeric) {
    points = spec.x
      .map((v, i) => ({ x: v as number, y: spec.y[i]!, name: decimal(v as number), i }))
      .sort((a, b) => a.x - b.x);
    const x = scaleLinear(
      extent(
        points.map((p) => p.x),
        false,
      ),
      [f.left, f.right],
    ).nice(6);
    position = x;
    children.push(axisX(x, f.plotBottom, { ticks: 6, bounds: [0, width] }));
  } else {
    if (n > ANALYSIS_FIGURE_BOUNDS.categories) throw tooMany(path, "line", n, "categories along x");
    const mixed = spec.x.findIndex((v) => typeof v === "number");
    if (mixed >= 0)
      throw specError(
        FN,
        `${path}.x[${mixed}]`,
        "a string like the other x values (a line runs over numbers or over named steps, not both)",
        String(spec.x[mixed]),
      );
    const names = spec.x.map(nameOf);
    const x = scalePoint(
      names.map((_, i) => String(i)),
      [f.left, f.right],
    ).padding(0.3);
    points = names.map((name, i) => ({ x: i, y: spec.y[i]!, name, i }));
    position = (v) => x(String(v)) ?? Number.NaN;
    children.push(
      categoryAxis(
        names,
        points.map((p) => position(p.x)),
        x.step(),
        f.plotBottom,
      ),
    );
  }
  const path_ = line(points, { x: position, y: f.y, xValue: (d) => d.x, yValue: (d) => d.y, stroke: COLORS.accent });
  if (path_) children.push({ ...path_, class: "curve" });
  if (n <= 60)
    children.push(
      ...dot(points, {
        x: position,
        y: f.y,
        xValue: (d) => d.x,
        yValue: (d) => d.y,
        r: 3,
        fill: () => COLORS.accent,
        class: "point",
        key: (d) => `p${d.i}`,
        tip: (d) => `${xName} ${d.name}: ${yName} ${decimal(d.y)}`,
      }),
    );
  if (spec.xLabel) children.push(xTitle(spec.xLabel, f.left, f.right, f.plotBottom + (numeric ? 22 : 24)));
  return { children, height: f.plotBottom + (spec.xLabel ? 46 : 30) };
}

/** Counts per bin as touching bars: numeric x are the bins' starts (each bin ends where the next starts), strings name them. */
function histogram(spec: AnalysisFigureSpec, width: number, path: string): { children: SceneNode[]; height: number } {
  spec.y.forEach((v, i) => {
    if (v < 0) throw specError(FN, `${path}.y[${i}]`, "a count ≥ 0 (a histogram's bars are counts)", decimal(v));
  });
  const f = frame(width, spec.y, true, spec.yLabel !== undefined);
  const n = spec.x.length;
  const xName = spec.xLabel ?? "bin";
  const yName = spec.yLabel ?? "count";
  const children: SceneNode[] = [yAxis(f, spec, width)];
  const base = f.y(0);
  const numeric = spec.x.every((v) => typeof v === "number");
  if (numeric && n > 0) {
    const starts = spec.x as readonly number[];
    starts.forEach((v, i) => {
      if (i > 0 && !(v > starts[i - 1]!))
        throw specError(
          FN,
          `${path}.x[${i}]`,
          `a bin start above the one before it (${decimal(starts[i - 1]!)}): a histogram's numeric x are increasing bin starts`,
          decimal(v),
        );
    });
    const last = n > 1 ? starts[n - 1]! - starts[n - 2]! : 1;
    const ends = starts.map((_, i) => (i + 1 < n ? starts[i + 1]! : starts[n - 1]! + last));
    const x = scaleLinear([starts[0]!, ends[n - 1]!], [f.left, f.right]);
    children.push(axisX(x, f.plotBottom, { ticks: 6, bounds: [0, width] }));
    starts.forEach((a, i) => {
      const left = x(a);
      const w = Math.max(0, x(ends[i]!) - left - (x(ends[i]!) - left > 3 ? 1 : 0));
      children.push({
        type: "rect",
        class: "bar",
        x: left,
        y: f.y(spec.y[i]!),
        width: w,
        height: Math.max(0, base - f.y(spec.y[i]!)),
        fill: COLORS.accent,
        key: `bin-${i}`,
        tip: `${xName} ${decimal(a)} to ${decimal(ends[i]!)}: ${yName} ${decimal(spec.y[i]!)}`,
      });
    });
  } else {
    if (n > ANALYSIS_FIGURE_BOUNDS.categories) throw tooMany(path, "histogram", n, "named bins");
    const names = spec.x.map(nameOf);
    const x = scaleBand(
      names.map((_, i) => String(i)),
      [f.left, f.right],
    ).padding(0.04);
    names.forEach((name, i) => {
      const left = x(String(i))!;
      children.push({
        type: "rect",
        class: "bar",
        x: left,
        y: f.y(spec.y[i]!),
        width: x.bandwidth(),
        height: Math.max(0, base - f.y(spec.y[i]!)),
        fill: COLORS.accent,
        key: `bin-${i}`,
        tip: `${xName} ${name}: ${yName} ${decimal(spec.y[i]!)}`,
      });
    });
    if (n > 0)
      children.push(
        categoryAxis(
          names,
          names.map((_, i) => x(String(i))! + x.bandwidth() / 2),
          x.step(),
          f.plotBottom,
        ),
      );
  }
  const zero = ruleY(0, f.y, f.left, f.right, { stroke: COLORS.text, class: "zero-line" });
  if (zero) children.push(zero);
  if (spec.xLabel) children.push(xTitle(spec.xLabel, f.left, f.right, f.plotBottom + (numeric ? 22 : 24)));
  return { children, height: f.plotBottom + (spec.xLabel ? 46 : 30) };
}

/** The range of the values in words, for the figure's accessible name. */
function summary(spec: AnalysisFigureSpec): string {
  const n = spec.y.length;
  if (n === 0) return "no values to draw";
  const what = { bar: "bar", scatter: "point", line: "point", histogram: "bin" }[spec.kind];
  const lo = spec.y.indexOf(Math.min(...spec.y));
  const hi = spec.y.indexOf(Math.max(...spec.y));
  const at = (i: number) =>
    spec.kind === "scatter" ? "" : ` at ${typeof spec.x[i] === "number" ? decimal(spec.x[i]) : spec.x[i]}`;
  const y = spec.yLabel ?? "y";
  return `${count(n)} ${what}${n === 1 ? "" : "s"}; ${y} from ${decimal(spec.y[lo]!)}${at(lo)} to ${decimal(spec.y[hi]!)}${at(hi)}`;
}

/**
 * What did an analysis run in the sandbox want to show? Draws one figure
 * spec it returned — a bar (one horizontal bar per named category, from
 * zero), a scatter (points at numeric x, y), a line (through numeric x in
 * order, or through named steps in the order given) or a histogram (counts
 * per bin: numeric x are increasing bin starts, strings name the bins) —
 * with the shared marks and axes, its values as the table. The spec is
 * untrusted: it is checked first (`checkAnalysisFigureSpec`: fields, bounds,
 * lengths), then per kind (a scatter needs numeric x, a histogram counts ≥ 0,
 * at most 50 named bars or bins), and a failure throws a TypeError naming
 * the field under `options.path` and what was expected; its values can
 * still be read with `analysisFigureTable`. Every string is drawn as text.
 *
 * @example analysisFigure({ kind: "bar", title: "Largest standardized differences", x: ["tokenEntropy.answer", "imageShare.L1"], y: [0.82, -0.31], xLabel: "signal", yLabel: "d (failures − passes)" }, { width: 640, path: "A1 figures[0]" })
 *   // { label: "Largest standardized differences: 2 bars; d (failures − passes) from -0.31 at imageShare.L1 to 0.82 at tokenEntropy.answer", table: { rows: [["tokenEntropy.answer", "0.82"], ["imageShare.L1", "-0.31"]], … }, … }
 */
export function analysisFigure(spec: unknown, options: AnalysisFigureOptions): Scene {
  const width = widthOption(FN, options?.width);
  const path = options.path ?? "figure";
  if (typeof path !== "string") throw specError(FN, "options.path", "a string", typeof path);
  const checked = checkAnalysisFigureSpec(spec, path, FN);
  const drawn =
    checked.kind === "bar"
      ? bars(checked, width, path)
      : checked.kind === "scatter"
        ? scatter(checked, width, path)
        : checked.kind === "line"
          ? lineFigure(checked, width, path)
          : histogram(checked, width, path);
  if (checked.y.length === 0)
    drawn.children.push(
      label({ x: width / 2, y: 40 }, "The analysis returned no values for this figure.", width - 16, {
        class: "empty",
        baseline: "middle",
      }),
    );
  return {
    width,
    height: Math.max(drawn.height, 64),
    label: `${checked.title}: ${summary(checked)}`,
    description: `A ${checked.kind} figure returned by an analysis run in the sandbox, drawn by the host from its values (shown in the table).`,
    children: drawn.children,
    table: analysisFigureTable(checked),
  };
}
