import type { TextNode } from "../scene.ts";
import { fitText } from "../text-width.ts";
import { COLORS, TYPE } from "../theme.ts";
import { finite, type Channel } from "./types.ts";

export interface TextOptions<T> {
  /** Positions in px (the figure lays labels out). */
  readonly x: Channel<T, number>;
  readonly y: Channel<T, number>;
  readonly text: Channel<T, string>;
  /** Labels wider than this (px) are cut with an ellipsis; the full text goes in the tip. */
  readonly maxWidth?: number;
  readonly anchor?: TextNode["anchor"];
  readonly baseline?: TextNode["baseline"];
  readonly size?: number;
  readonly weight?: TextNode["weight"];
  readonly fill?: Channel<T, string>;
  /** A tip even for labels that fit (it is added anyway for cut ones). */
  readonly tip?: Channel<T, string>;
  readonly class?: string;
}

/**
 * Labels measured against `maxWidth` (see `fitText`): one that does not fit
 * is cut with "…" and keeps its full text as its tip, so nothing is lost.
 *
 * @example text(metrics, { x: () => 150, y: (d) => band(d)!, text: (d) => d, maxWidth: 140, anchor: "end" })
 */
export function text<T>(data: readonly T[], options: TextOptions<T>): TextNode[] {
  const size = options.size ?? TYPE.label;
  const out: TextNode[] = [];
  data.forEach((d, i) => {
    const x = options.x(d, i);
    const y = options.y(d, i);
    if (!finite(x, y)) return;
    const full = options.text(d, i);
    const fitted = options.maxWidth !== undefined ? fitText(full, options.maxWidth, size) : { text: full, cut: false };
    const tip = options.tip?.(d, i) ?? (fitted.cut ? full : undefined);
    out.push({
      type: "text",
      ...(options.class ? { class: options.class } : {}),
      x,
      y,
      text: fitted.text,
      ...(options.anchor ? { anchor: options.anchor } : {}),
      ...(options.baseline ? { baseline: options.baseline } : {}),
      ...(options.size !== undefined ? { size: options.size } : {}),
      ...(options.weight ? { weight: options.weight } : {}),
      fill: options.fill?.(d, i) ?? COLORS.text,
      ...(tip ? { tip } : {}),
    });
  });
  return out;
}
