import type { RectNode } from "../scene.ts";
import { COLORS } from "../theme.ts";
import { finite, type Channel, type PositionScale } from "./types.ts";

export interface BarOptions<T> {
  /** Where each bar sits along x: its left edge in px and its width. */
  readonly x: Channel<T, number>;
  readonly width: number;
  /** The value axis (vertical) and the bar's value; bars grow from `base` (default 0). */
  readonly y: PositionScale;
  readonly value: Channel<T, number>;
  readonly base?: number;
  readonly fill?: Channel<T, string>;
  readonly tip?: Channel<T, string>;
  readonly key?: Channel<T, string>;
  readonly class?: Channel<T, string>;
}

/**
 * Vertical bars from `base` to each datum's value; a datum whose value or
 * position is not finite has no bar (a gap, never a bar of height 0 that
 * reads as a measured zero).
 *
 * @example barY(rows, { x: (d) => band(d.repeats)!, width: band.bandwidth(), y, value: (d) => d.tolerance })
 */
export function barY<T>(data: readonly T[], options: BarOptions<T>): RectNode[] {
  const base = options.y(options.base ?? 0);
  const out: RectNode[] = [];
  data.forEach((d, i) => {
    const x = options.x(d, i);
    const top = options.y(options.value(d, i));
    if (!finite(x, top, base, options.width)) return;
    const tip = options.tip?.(d, i);
    const key = options.key?.(d, i);
    const cls = options.class?.(d, i);
    out.push({
      type: "rect",
      ...(cls ? { class: cls } : {}),
      x,
      y: Math.min(top, base),
      width: options.width,
      height: Math.abs(base - top),
      fill: options.fill?.(d, i) ?? COLORS.accent,
      ...(key !== undefined ? { key } : {}),
      ...(tip ? { tip } : {}),
    });
  });
  return out;
}
