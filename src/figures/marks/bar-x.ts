import type { RectNode } from "../scene.ts";
import { COLORS } from "../theme.ts";
import { finite, type Channel, type PositionScale } from "./types.ts";

export interface BarXOptions<T> {
  /** The value axis (horizontal) and the bar's value; bars grow from `base` (default 0) to the value. */
  readonly x: PositionScale;
  readonly value: Channel<T, number>;
  readonly base?: number;
  /** Where each bar sits along y: its top edge in px, and its height. */
  readonly y: Channel<T, number>;
  readonly height: number;
  readonly fill?: Channel<T, string>;
  readonly tip?: Channel<T, string>;
  readonly key?: Channel<T, string>;
  readonly class?: Channel<T, string>;
}

/**
 * Horizontal bars from `base` to each datum's value, so a negative value
 * points left of the base and a positive one right of it; a datum whose value
 * or row is not finite has no bar (a gap, never a bar of width 0 that reads
 * as a measured zero).
 *
 * @example barX(repairs, { x, value: (d) => (d.fixed - d.broken) / d.n, y: (d) => rowTop(d), height: 14 })
 */
export function barX<T>(data: readonly T[], options: BarXOptions<T>): RectNode[] {
  const base = options.x(options.base ?? 0);
  const out: RectNode[] = [];
  data.forEach((d, i) => {
    const end = options.x(options.value(d, i));
    const y = options.y(d, i);
    if (!finite(end, base, y, options.height)) return;
    const tip = options.tip?.(d, i);
    const key = options.key?.(d, i);
    const cls = options.class?.(d, i);
    out.push({
      type: "rect",
      class: cls ? `bar ${cls}` : "bar",
      x: Math.min(end, base),
      y,
      width: Math.abs(end - base),
      height: options.height,
      fill: options.fill?.(d, i) ?? COLORS.accent,
      ...(key !== undefined ? { key } : {}),
      ...(tip ? { tip } : {}),
    });
  });
  return out;
}
