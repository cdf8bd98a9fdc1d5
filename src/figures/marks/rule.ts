import type { GroupNode, LineNode, TextNode } from "../scene.ts";
import { fitText, textWidth } from "../text-width.ts";
import { COLORS, TYPE } from "../theme.ts";
import { finite, style, type MarkStyle, type PositionScale } from "./types.ts";

export interface RuleOptions extends MarkStyle {
  /** A word beside the rule (e.g. "no change", "−3 pts tolerance"), at its top end. */
  readonly label?: string;
  /** Where the label sits against the line (default "middle": centred on it). */
  readonly labelAnchor?: "start" | "middle" | "end";
  readonly tip?: string;
  readonly key?: string;
  /** The figure's horizontal extent [left, right] in px: the label is kept inside it (default [0, ∞)). */
  readonly bounds?: readonly [number, number];
}

function labelled(
  line: LineNode,
  options: RuleOptions,
  place: Omit<TextNode, "type" | "text"> | undefined,
): GroupNode | LineNode {
  if (!options.label || !place) return line;
  // Keep the label inside the figure: cut it to the room there is, then set it flush with the edge it would cross.
  const [b0, b1] = options.bounds ?? [0, Infinity];
  const fitted = fitText(options.label, b1 - b0, TYPE.small);
  const w = textWidth(fitted.text, TYPE.small);
  const start = place.anchor === "middle" ? place.x - w / 2 : place.anchor === "end" ? place.x - w : place.x;
  const text =
    start < b0
      ? { ...place, x: b0, anchor: "start" as const }
      : start + w > b1
        ? { ...place, x: b1, anchor: "end" as const }
        : place;
  return {
    type: "g",
    class: `rule ${options.class ?? ""}`.trim(),
    ...(options.key ? { key: options.key } : {}),
    ...(options.tip ? { tip: options.tip } : {}),
    children: [
      line,
      {
        type: "text",
        text: fitted.text,
        size: TYPE.small,
        fill: options.stroke ?? COLORS.muted,
        ...text,
        ...(fitted.cut && !options.tip ? { tip: options.label } : {}),
      },
    ],
  };
}

/**
 * A vertical line at the data value `value`, from y1 to y2 px (the zero line,
 * a tolerance); nothing when `value` is not finite.
 *
 * @example ruleX(0, x, 10, 120, { stroke: COLORS.text, label: "no change" })
 */
export function ruleX(
  value: number,
  x: PositionScale,
  y1: number,
  y2: number,
  options: RuleOptions = {},
): GroupNode | LineNode | undefined {
  const px = x(value);
  if (!finite(value, px, y1, y2)) return undefined;
  const { label: _l, labelAnchor, tip, key, ...rest } = options;
  const line: LineNode = {
    type: "line",
    x1: px,
    y1,
    x2: px,
    y2,
    stroke: COLORS.text,
    ...style(rest),
    ...(!options.label && tip ? { tip } : {}),
    ...(!options.label && key ? { key } : {}),
  };
  const anchor = labelAnchor ?? "middle";
  const dx = anchor === "start" ? 3 : anchor === "end" ? -3 : 0;
  return labelled(line, options, { x: px + dx, y: Math.min(y1, y2) - 3, anchor });
}

/**
 * A horizontal line at the data value `value`, from x1 to x2 px (a target
 * power, a tolerance); nothing when `value` is not finite.
 *
 * @example ruleY(0.8, y, 40, 600, { strokeDasharray: "4 3", label: "80%" })
 */
export function ruleY(
  value: number,
  y: PositionScale,
  x1: number,
  x2: number,
  options: RuleOptions = {},
): GroupNode | LineNode | undefined {
  const py = y(value);
  if (!finite(value, py, x1, x2)) return undefined;
  const { label: _l, labelAnchor, tip, key, ...rest } = options;
  const line: LineNode = {
    type: "line",
    x1,
    y1: py,
    x2,
    y2: py,
    stroke: COLORS.text,
    ...style(rest),
    ...(!options.label && tip ? { tip } : {}),
    ...(!options.label && key ? { key } : {}),
  };
  const anchor = labelAnchor ?? "end";
  const right = Math.max(x1, x2);
  const left = Math.min(x1, x2);
  return labelled(line, options, {
    x: anchor === "end" ? right - 2 : anchor === "start" ? left + 2 : (left + right) / 2,
    y: py - 4,
    anchor,
  });
}
