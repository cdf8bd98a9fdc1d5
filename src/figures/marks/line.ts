import { line as d3line, curveMonotoneX, curveLinear } from "d3-shape";
import type { PathNode } from "../scene.ts";
import { COLORS } from "../theme.ts";
import { finite, style, type Channel, type MarkStyle, type PositionScale } from "./types.ts";

export interface LineOptions<T> extends MarkStyle {
  readonly x: PositionScale;
  readonly y: PositionScale;
  readonly xValue: Channel<T, number>;
  readonly yValue: Channel<T, number>;
  /** Monotone in x (smooth, never overshooting: right for a power curve), or straight segments (default). */
  readonly curve?: "linear" | "monotone";
  readonly tip?: string;
  readonly key?: string;
}

/**
 * A line through the data in order, as one path whose `d` d3-shape writes; a
 * datum with a value that is not finite breaks the line there (a gap, never
 * a drop to 0). Nothing when fewer than one point is drawable.
 *
 * @example line(points, { x, y, xValue: (d) => d.drop, yValue: (d) => d.power, curve: "monotone" })
 */
export function line<T>(data: readonly T[], options: LineOptions<T>): PathNode | undefined {
  const { x, y, xValue, yValue, curve, tip, key, ...rest } = options;
  const points = data.map((d, i) => [x(xValue(d, i)), y(yValue(d, i))] as [number, number]);
  if (!points.some(([px, py]) => finite(px, py))) return undefined;
  const d = d3line<[number, number]>()
    .defined(([px, py]) => finite(px, py))
    .curve(curve === "monotone" ? curveMonotoneX : curveLinear)
    .digits(2)(points);
  if (!d) return undefined;
  return {
    type: "path",
    d,
    fill: "none",
    stroke: COLORS.text,
    strokeWidth: 2,
    ...style(rest),
    ...(key !== undefined ? { key } : {}),
    ...(tip ? { tip } : {}),
  };
}
