import { scaleLinear } from "d3-scale";
import type { GroupNode, SceneNode } from "../scene.ts";
import { fitText } from "../text-width.ts";
import { COLORS, TYPE } from "../theme.ts";
import { axisX } from "./axis.ts";
import { finite } from "./types.ts";

export interface RampOptions {
  /** The legend's top-left corner and size of its colour bar in px. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height?: number;
  /** The values the bar spans, low to high. */
  readonly domain: readonly [number, number];
  /** The colour of a share t ∈ [0, 1] of the domain (the figure's colour ramp). */
  readonly color: (t: number) => string;
  /** The opacity of a share t, when the figure draws cells with it (an overlay fades low values out). */
  readonly opacity?: (t: number) => number;
  /** A d3-format specifier for the tick labels, or a function. */
  readonly format?: string | ((value: number) => string);
  /** What the colour means (drawn above the bar, e.g. "attention share"). */
  readonly label?: string;
  /** Room for the label in px (default: the bar's width). */
  readonly labelWidth?: number;
  /** The figure's horizontal extent [left, right] in px: tick labels are kept inside it (default: the bar's). */
  readonly bounds?: readonly [number, number];
  /** Colour steps drawn (default 24). */
  readonly steps?: number;
}

/**
 * A colour legend: the ramp as a bar of small steps from the domain's low
 * end to its high end, with ticks from the scale under it, so a colour can
 * be read back as a number. Nothing when the domain is not finite.
 *
 * @example rampLegend({ x: 0, y: 160, width: 160, domain: [0, 0.12], color: sequential, format: ".0%", label: "attention" })
 */
export function rampLegend(options: RampOptions): GroupNode | undefined {
  const [d0, d1] = options.domain;
  if (!finite(d0, d1, options.x, options.y, options.width)) return undefined;
  const steps = options.steps ?? 24;
  const height = options.height ?? 8;
  const step = options.width / steps;
  const children: SceneNode[] = [];
  for (let i = 0; i < steps; i++) {
    const t = steps === 1 ? 1 : i / (steps - 1);
    const opacity = options.opacity?.(t);
    children.push({
      type: "rect",
      class: "ramp-step",
      x: options.x + i * step,
      y: options.y,
      width: step + 0.4, // a hair of overlap so no seam shows between steps
      height,
      fill: options.color(t),
      ...(opacity !== undefined && finite(opacity) ? { opacity } : {}),
    });
  }
  children.push({
    type: "rect",
    class: "ramp-frame",
    x: options.x,
    y: options.y,
    width: options.width,
    height,
    fill: "none",
    stroke: COLORS.line,
  });
  const scale = scaleLinear([d0, d1 === d0 ? d0 + 1 : d1], [options.x, options.x + options.width]);
  children.push(
    axisX(scale, options.y + height, {
      ticks: 3,
      ...(options.format !== undefined ? { format: options.format } : {}),
      tickSize: 3,
      bounds: options.bounds ?? [options.x, options.x + options.width],
    }),
  );
  if (options.label) {
    const label = fitText(options.label, options.labelWidth ?? options.width, TYPE.small);
    children.push({
      type: "text",
      class: "legend",
      x: options.x,
      y: options.y - 4,
      text: label.text,
      ...(label.cut ? { tip: options.label } : {}),
      size: TYPE.small,
      fill: COLORS.muted,
    });
  }
  return { type: "g", class: "legend ramp", children };
}
