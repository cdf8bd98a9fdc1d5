import type { GroupNode, SceneNode } from "../scene.ts";
import { fitText, textWidth } from "../text-width.ts";
import { COLORS, TYPE } from "../theme.ts";
import type { TickScale } from "./types.ts";

export interface AxisOptions {
  /** About how many ticks (d3's `ticks(count)`: it picks round values); fewer are used when labels would touch. */
  readonly ticks?: number;
  /** Explicit tick values instead (those outside the scale's range are left out). */
  readonly values?: readonly number[];
  /** A d3-format specifier for `scale.tickFormat` (e.g. "+.0%"), or a function. */
  readonly format?: string | ((value: number) => string);
  /** Axis title, drawn under (x) or above (y) the tick labels; cut with "…" to `labelWidth` (its full text is its tip). */
  readonly label?: string;
  /** Room for the title in px (default: the axis' length for x, 240 for y). */
  readonly labelWidth?: number;
  /** Grid lines across the plot: from this coordinate to the axis (y for axisX, x for axisY). */
  readonly gridTo?: number;
  readonly tickSize?: number;
  /** The figure's horizontal extent [left, right] in px: tick labels at the ends are kept inside it. */
  readonly bounds?: readonly [number, number];
}

function tickValues(scale: TickScale, options: AxisOptions, count: number): number[] {
  const [r0, r1] = scale.range() as [number, number];
  const [lo, hi] = r0 <= r1 ? [r0, r1] : [r1, r0];
  const [d0, d1] = scale.domain() as [number, number];
  // A degenerate domain (empty, or narrower than floating point can tick) has no ticks rather than millions.
  const tickable = Number.isFinite(d0) && Number.isFinite(d1) && Math.abs(d1 - d0) > 1e-12 * Math.max(1, Math.abs(d0));
  const values = options.values ? [...options.values] : tickable ? scale.ticks(count) : [];
  return values.filter((v) => Number.isFinite(scale(v)) && scale(v) >= lo - 0.5 && scale(v) <= hi + 0.5);
}

function formatter(scale: TickScale, options: AxisOptions, count: number): (v: number) => string {
  if (typeof options.format === "function") return options.format;
  return scale.tickFormat(count, options.format);
}

/**
 * A horizontal axis at `y`: ticks where `scale.ticks()` puts them, labelled
 * by `scale.tickFormat()` (or `format`), thinned until no two labels touch.
 *
 * @example axisX(scaleLinear([0, 1], [40, 600]), 150, { format: ".0%", label: "pass rate" })
 *   // { type: "g", class: "axis axis-x", children: [domain line, 6 ticks, 6 labels, title] }
 */
export function axisX(scale: TickScale, y: number, options: AxisOptions = {}): GroupNode {
  const size = options.tickSize ?? 4;
  let count = options.ticks ?? 6;
  let values: number[] = [];
  let labels: string[] = [];
  for (;;) {
    values = tickValues(scale, options, count);
    const f = formatter(scale, options, count);
    labels = values.map(f);
    const widths = labels.map((l) => textWidth(l, TYPE.small));
    const touching = values.some(
      (v, i) => i > 0 && scale(v) - scale(values[i - 1]!) < (widths[i]! + widths[i - 1]!) / 2 + 6,
    );
    if (!touching || count <= 2 || options.values) break;
    count = Math.max(2, Math.floor(count / 2));
  }
  const [r0, r1] = scale.range() as [number, number];
  const children: SceneNode[] = [];
  if (options.gridTo !== undefined)
    for (const v of values)
      children.push({
        type: "line",
        class: "grid",
        x1: scale(v),
        y1: options.gridTo,
        x2: scale(v),
        y2: y,
        stroke: COLORS.line,
      });
  children.push({ type: "line", class: "domain", x1: r0, y1: y, x2: r1, y2: y, stroke: COLORS.faint });
  const [b0, b1] = options.bounds ?? [Math.min(r0, r1) - 40, Math.max(r0, r1) + 40];
  values.forEach((v, i) => {
    children.push({
      type: "line",
      class: "tick",
      x1: scale(v),
      y1: y,
      x2: scale(v),
      y2: y + size,
      stroke: COLORS.faint,
    });
    // A label that would run past the figure's edge is set flush with it (and cut if even that is too wide).
    const label = fitText(labels[i]!, b1 - b0, TYPE.small);
    const w = textWidth(label.text, TYPE.small);
    const [x, anchor] =
      scale(v) - w / 2 < b0
        ? [b0, "start" as const]
        : scale(v) + w / 2 > b1
          ? [b1, "end" as const]
          : [scale(v), "middle" as const];
    children.push({
      type: "text",
      class: "tick-label",
      x,
      y: y + size + 2,
      text: label.text,
      ...(label.cut ? { tip: labels[i]! } : {}),
      anchor,
      baseline: "hanging",
      fill: COLORS.muted,
    });
  });
  if (options.label) {
    const title = fitText(options.label, options.labelWidth ?? Math.abs(r1 - r0), TYPE.title);
    children.push({
      type: "text",
      class: "axis-label",
      x: (r0 + r1) / 2,
      y: y + size + 18,
      text: title.text,
      ...(title.cut ? { tip: options.label } : {}),
      anchor: "middle",
      baseline: "hanging",
      size: TYPE.title,
      fill: COLORS.muted,
    });
  }
  return { type: "g", class: "axis axis-x", children };
}

/**
 * A vertical axis at `x`: ticks from `scale.ticks()`, labels to their left.
 *
 * @example axisY(scaleLinear([0, 1], [160, 10]), 48, { format: ".0%" })
 */
export function axisY(scale: TickScale, x: number, options: AxisOptions = {}): GroupNode {
  const size = options.tickSize ?? 4;
  let count = options.ticks ?? 5;
  let values: number[] = [];
  for (;;) {
    values = tickValues(scale, options, count);
    const touching = values.some((v, i) => i > 0 && Math.abs(scale(v) - scale(values[i - 1]!)) < TYPE.small + 4);
    if (!touching || count <= 2 || options.values) break;
    count = Math.max(2, Math.floor(count / 2));
  }
  const f = formatter(scale, options, count);
  const [r0, r1] = scale.range() as [number, number];
  const children: SceneNode[] = [];
  if (options.gridTo !== undefined)
    for (const v of values)
      children.push({
        type: "line",
        class: "grid",
        x1: x,
        y1: scale(v),
        x2: options.gridTo,
        y2: scale(v),
        stroke: COLORS.line,
      });
  children.push({ type: "line", class: "domain", x1: x, y1: r0, x2: x, y2: r1, stroke: COLORS.faint });
  for (const v of values) {
    children.push({
      type: "line",
      class: "tick",
      x1: x - size,
      y1: scale(v),
      x2: x,
      y2: scale(v),
      stroke: COLORS.faint,
    });
    // Labels wider than the margin left of the axis are cut (the full label is the tip).
    const label = fitText(f(v), x - size - 3 - (options.bounds?.[0] ?? 0), TYPE.small);
    children.push({
      type: "text",
      class: "tick-label",
      x: x - size - 3,
      y: scale(v),
      text: label.text,
      ...(label.cut ? { tip: f(v) } : {}),
      anchor: "end",
      baseline: "middle",
      fill: COLORS.muted,
    });
  }
  if (options.label) {
    const widest = Math.min(x - size - 3, Math.max(0, ...values.map((v) => textWidth(f(v), TYPE.small))));
    const title = fitText(options.label, options.labelWidth ?? 240, TYPE.title);
    children.push({
      type: "text",
      class: "axis-label",
      x: Math.max(0, x - size - 3 - widest),
      y: Math.min(r0, r1) - 8,
      text: title.text,
      ...(title.cut ? { tip: options.label } : {}),
      anchor: "start",
      size: TYPE.title,
      fill: COLORS.muted,
    });
  }
  return { type: "g", class: "axis axis-y", children };
}
