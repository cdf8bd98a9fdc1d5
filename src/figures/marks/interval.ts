import type { GroupNode, SceneNode } from "../scene.ts";
import { COLORS } from "../theme.ts";
import { finite, type Channel, type PositionScale } from "./types.ts";

export interface IntervalOptions<T> {
  /** The value axis (horizontal). */
  readonly x: PositionScale;
  /** The row's vertical position in px (the figure lays rows out). */
  readonly y: Channel<T, number>;
  readonly lo: Channel<T, number>;
  readonly hi: Channel<T, number>;
  /** The point estimate, drawn as a dot. */
  readonly mid: Channel<T, number>;
  readonly color?: Channel<T, string>;
  readonly tip?: Channel<T, string>;
  readonly key?: Channel<T, string>;
  readonly class?: Channel<T, string>;
  /** Dot radius in px (default 4). */
  readonly r?: number;
  /** Height of the end caps in px (default 8; 0 for none). */
  readonly cap?: number;
  readonly strokeWidth?: number;
}

/**
 * Horizontal intervals: a line from lo to hi with end caps and a dot at the
 * estimate, one group per datum (with its tip). A datum whose estimate or row
 * is not finite is dropped; one whose bounds are not finite keeps its dot only.
 *
 * @example intervalX(rows, { x, y: (d) => band(d.metric)!, lo: (d) => d.lo, hi: (d) => d.hi, mid: (d) => d.diff })
 */
export function intervalX<T>(data: readonly T[], options: IntervalOptions<T>): GroupNode[] {
  const r = options.r ?? 4;
  const cap = options.cap ?? 8;
  const out: GroupNode[] = [];
  data.forEach((d, i) => {
    const y = options.y(d, i);
    const mid = options.x(options.mid(d, i));
    if (!finite(y, mid)) return;
    const lo = options.x(options.lo(d, i));
    const hi = options.x(options.hi(d, i));
    const color = options.color?.(d, i) ?? COLORS.text;
    const stroke = { stroke: color, strokeWidth: options.strokeWidth ?? 2 };
    const children: SceneNode[] = [];
    if (finite(lo, hi)) {
      children.push({ type: "line", class: "interval", x1: lo, y1: y, x2: hi, y2: y, ...stroke });
      if (cap > 0)
        for (const x of [lo, hi])
          children.push({ type: "line", class: "cap", x1: x, y1: y - cap / 2, x2: x, y2: y + cap / 2, ...stroke });
    }
    children.push({ type: "circle", class: "estimate", cx: mid, cy: y, r, fill: color });
    const tip = options.tip?.(d, i);
    const key = options.key?.(d, i);
    const cls = options.class?.(d, i);
    out.push({
      type: "g",
      class: cls ? `mark-interval ${cls}` : "mark-interval",
      ...(key !== undefined ? { key } : {}),
      ...(tip ? { tip } : {}),
      children,
    });
  });
  return out;
}
