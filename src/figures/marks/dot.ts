import type { CircleNode } from "../scene.ts";
import { COLORS } from "../theme.ts";
import { finite, type Channel, type PositionScale } from "./types.ts";

export interface DotOptions<T> {
  readonly x: PositionScale;
  readonly y: PositionScale;
  readonly xValue: Channel<T, number>;
  readonly yValue: Channel<T, number>;
  readonly r?: number;
  readonly fill?: Channel<T, string>;
  readonly stroke?: string;
  readonly tip?: Channel<T, string>;
  readonly key?: Channel<T, string>;
  readonly class?: string;
}

/**
 * One circle per datum at (x, y); a datum with a value that is not finite is dropped.
 *
 * @example dot(points, { x, y, xValue: (d) => d.n, yValue: (d) => d.power, tip: (d) => `${d.n} cases: ${d.power}` })
 */
export function dot<T>(data: readonly T[], options: DotOptions<T>): CircleNode[] {
  const out: CircleNode[] = [];
  data.forEach((d, i) => {
    const cx = options.x(options.xValue(d, i));
    const cy = options.y(options.yValue(d, i));
    if (!finite(cx, cy)) return;
    const tip = options.tip?.(d, i);
    const key = options.key?.(d, i);
    out.push({
      type: "circle",
      ...(options.class ? { class: options.class } : {}),
      cx,
      cy,
      r: options.r ?? 3.5,
      fill: options.fill?.(d, i) ?? COLORS.text,
      ...(options.stroke ? { stroke: options.stroke } : {}),
      ...(key !== undefined ? { key } : {}),
      ...(tip ? { tip } : {}),
    });
  });
  return out;
}
