import { scaleBand, scaleLinear } from "d3-scale";
import { count, percent, pointSize } from "./format.ts";
import { axisY } from "./marks/axis.ts";
import { barY } from "./marks/bar.ts";
import { ruleY } from "./marks/rule.ts";
import { text } from "./marks/text.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { COLORS, TYPE } from "./theme.ts";
import { numberField, rowsOf, shareOption, widthOption } from "./validate.ts";

/** One row of an A/A calibration: with this many repeats, the tolerance 95% of A/A pairs pass at. */
export interface CalibrationBar {
  readonly repeats: number;
  /** The A/A noise floor (a share, e.g. 0.041 for 4.1 points). */
  readonly tolerance: number;
  /** Share of A/A pairs that pass at the target tolerance, when a target was set. */
  readonly aaPassAtTarget?: number;
}

export interface CalibrationOptions {
  readonly width: number;
  /** The tolerance the gate should use (a share), drawn as a dashed line. */
  readonly target?: number;
  /** The repeats recommended (highlighted), or null when none reaches the target. */
  readonly recommended?: number | null;
}

const FN = "calibration";

/**
 * How many repeats does it take for the eval's own noise to fit under the
 * target tolerance? One bar per number of repeats: the tolerance 95% of
 * simulated A/A comparisons (same model, same code) pass at — the noise
 * floor — against the target tolerance as a dashed line. The recommended
 * repeats (the fewest under the target) are drawn in the accent colour and
 * named; the others are grey.
 *
 * @example calibration([{ repeats: 1, tolerance: 0.071 }, { repeats: 3, tolerance: 0.028 }], { width: 640, target: 0.03, recommended: 3 })
 *   // { label: "A/A noise floor by repeats: 3 repeats reach the target 3.0 pts (noise floor 2.8 pts)", … }
 */
export function calibration(rows: readonly CalibrationBar[], options: CalibrationOptions): Scene {
  const width = widthOption(FN, options?.width);
  const target = shareOption(FN, "target", options.target);
  const data = rowsOf<CalibrationBar>(FN, "rows", rows).map((r, i) => {
    const repeats = numberField(FN, `rows[${i}].repeats`, r.repeats);
    if (!Number.isInteger(repeats) || repeats < 1)
      throw new RangeError(`${FN}(): rows[${i}].repeats must be a positive integer, got ${repeats}`);
    return {
      repeats,
      tolerance: numberField(FN, `rows[${i}].tolerance`, r.tolerance),
      aaPassAtTarget: numberField(FN, `rows[${i}].aaPassAtTarget`, r.aaPassAtTarget, true),
    };
  });
  const recommended = options.recommended ?? null;

  const left = 52;
  const right = 16;
  const top = 26;
  const plotBottom = 180;
  const height = plotBottom + 46;
  const floors = data.map((d) => d.tolerance).filter(Number.isFinite);
  const y = scaleLinear(
    [Math.min(0, ...floors), Math.max(0.01, ...floors, target ?? 0) * 1.15],
    [plotBottom, top],
  ).nice();
  const x = scaleBand(
    data.map((d) => String(d.repeats)),
    [left, width - right],
  )
    .paddingInner(0.35)
    .paddingOuter(0.2);
  const describe = (d: (typeof data)[number]) =>
    `${d.repeats} repeat${d.repeats === 1 ? "" : "s"}: A/A noise floor ${pointSize(d.tolerance)}` +
    (Number.isFinite(d.aaPassAtTarget) && target !== undefined
      ? `; ${percent(d.aaPassAtTarget)} of A/A pairs pass at ${pointSize(target)}`
      : "") +
    (d.repeats === recommended ? " (recommended)" : "");

  const children: SceneNode[] = [
    axisY(y, left, {
      format: (v) => `${Math.round(v * 1e4) / 1e2}`,
      gridTo: width - right,
      label: "A/A noise floor, points",
      labelWidth: width / 2,
    }),
    ...barY(data, {
      x: (d) => x(String(d.repeats)) ?? Number.NaN,
      width: x.bandwidth(),
      y,
      value: (d) => d.tolerance,
      fill: (d) => (d.repeats === recommended ? COLORS.accent : COLORS.faint),
      class: (d) => (d.repeats === recommended ? "bar recommended" : "bar"),
      key: (d) => String(d.repeats),
      tip: describe,
    }),
    ...text(data, {
      x: (d) => (x(String(d.repeats)) ?? Number.NaN) + x.bandwidth() / 2,
      y: (d) => y(d.tolerance) - 4,
      text: (d) => pointSize(d.tolerance).replace(" pts", ""),
      anchor: "middle",
      size: TYPE.small,
      fill: () => COLORS.text,
      class: "bar-value",
    }),
    ...text(data, {
      x: (d) => (x(String(d.repeats)) ?? Number.NaN) + x.bandwidth() / 2,
      y: () => plotBottom + 6,
      text: (d) => `${d.repeats}×${d.repeats === recommended ? " ✓" : ""}`,
      anchor: "middle",
      baseline: "hanging",
      size: TYPE.label,
      weight: "normal",
      fill: (d) => (d.repeats === recommended ? COLORS.accent : COLORS.muted),
      class: "tick-label",
    }),
    {
      type: "line",
      class: "domain",
      x1: left,
      y1: plotBottom,
      x2: width - right,
      y2: plotBottom,
      stroke: COLORS.faint,
    },
    {
      type: "text",
      class: "axis-label",
      x: (left + width - right) / 2,
      y: plotBottom + 24,
      text: "repeats per case",
      anchor: "middle",
      baseline: "hanging",
      size: TYPE.title,
      fill: COLORS.muted,
    },
  ];
  if (target !== undefined) {
    const rule = ruleY(target, y, left, width - right, {
      bounds: [0, width],
      stroke: COLORS.fail,
      strokeDasharray: "4 3",
      label: `target ${pointSize(target)}`,
      class: "target",
    });
    if (rule) children.push(rule);
  }
  const best = data.find((d) => d.repeats === recommended);
  const answer =
    target === undefined
      ? "no target tolerance set"
      : best
        ? `${best.repeats} repeat${best.repeats === 1 ? "" : "s"} reach the target ${pointSize(target)} (noise floor ${pointSize(best.tolerance)})`
        : `no tabulated number of repeats reaches the target ${pointSize(target)}`;
  return {
    width,
    height,
    label: `A/A noise floor by repeats: ${answer}`,
    description:
      "For each number of repeats, the tolerance at which 95% of simulated A/A comparisons (the same model and code compared with itself) pass: a gate with a smaller tolerance would fail unchanged models.",
    children,
    table: {
      caption: "A/A noise floor by repeats",
      columns: [
        { label: "Repeats", align: "right" },
        { label: "Noise floor (95% of A/A pass)", align: "right" },
        ...(target !== undefined ? [{ label: `A/A pass at ${pointSize(target)}`, align: "right" as const }] : []),
        { label: "Recommended" },
      ],
      rows: data.map((d) => [
        count(d.repeats),
        pointSize(d.tolerance),
        ...(target !== undefined ? [percent(d.aaPassAtTarget)] : []),
        d.repeats === recommended ? "yes" : "",
      ]),
    },
  };
}
