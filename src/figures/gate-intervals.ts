import { scaleLinear } from "d3-scale";
import { points, pointSize, pointsTick, pValue } from "./format.ts";
import { axisX } from "./marks/axis.ts";
import { intervalX } from "./marks/interval.ts";
import { ruleX } from "./marks/rule.ts";
import { text } from "./marks/text.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { textWidth } from "./text-width.ts";
import { COLORS, TYPE, VERDICT_COLORS } from "./theme.ts";
import { numberField, rowsOf, textField, widthOption } from "./validate.ts";

/** One metric's paired difference (candidate − baseline) as the gate judged it. */
export interface GateIntervalRow {
  readonly metric: string;
  /** Difference of shares, candidate − baseline, and its interval. */
  readonly diff: number;
  readonly lo: number;
  readonly hi: number;
  /** Gated metrics can fail the gate; the others are exploratory (drawn grey, no verdict). */
  readonly gated: boolean;
  /** How large a drop matters (a share, e.g. 0.03); the line is drawn at −tolerance. */
  readonly tolerance?: number;
  readonly verdict?: "pass" | "fail" | "inconclusive";
  /** The interval's confidence (e.g. 0.975 for two gated metrics under Holm). */
  readonly confidence?: number;
  /** The p-value shown in the tip (adjusted, as the gate uses it). */
  readonly p?: number;
  /** The test, in words (e.g. "exact McNemar, Newcombe interval"). */
  readonly test?: string;
}

export interface GateIntervalOptions {
  readonly width: number;
}

const FN = "gateIntervals";
const ROW = 30;
const VERDICT_WIDTH = 96;

const VERDICT_WORD = { pass: "pass", fail: "FAIL", inconclusive: "inconclusive" } as const;

/**
 * Did the candidate drop by more than the tolerance on any gated metric? Each
 * metric's paired difference (candidate − baseline) with its interval, the
 * zero line (no change), the −tolerance line the gate judges against, and the
 * verdict written beside each gated metric: pass when the whole interval is
 * at or above −tolerance, fail when it is wholly below, inconclusive when it
 * straddles the line. Exploratory metrics are drawn grey, without a verdict.
 *
 * @example gateIntervals([{ metric: "pass", diff: -0.1, lo: -0.195, hi: 0.004, gated: true, tolerance: 0.03, verdict: "inconclusive" }], { width: 640 })
 *   // { label: "pass: −10.0 pts [−19.5 pts, +0.4 pts], tolerance 3.0 pts → inconclusive", … }
 */
export function gateIntervals(tests: readonly GateIntervalRow[], options: GateIntervalOptions): Scene {
  const width = widthOption(FN, options?.width);
  const data = rowsOf<GateIntervalRow>(FN, "tests", tests).map((t, i) => {
    const verdict = t.verdict;
    if (verdict !== undefined && !(verdict in VERDICT_WORD))
      throw new RangeError(
        `${FN}(): tests[${i}].verdict must be "pass", "fail" or "inconclusive", got ${JSON.stringify(verdict)}`,
      );
    return {
      metric: textField(FN, `tests[${i}].metric`, t.metric),
      diff: numberField(FN, `tests[${i}].diff`, t.diff),
      lo: numberField(FN, `tests[${i}].lo`, t.lo),
      hi: numberField(FN, `tests[${i}].hi`, t.hi),
      gated: t.gated === true,
      tolerance: numberField(FN, `tests[${i}].tolerance`, t.tolerance, true),
      verdict,
      confidence: numberField(FN, `tests[${i}].confidence`, t.confidence, true),
      p: numberField(FN, `tests[${i}].p`, t.p, true),
      test: t.test === undefined ? "" : textField(FN, `tests[${i}].test`, t.test),
    };
  });
  type Row = (typeof data)[number];

  const labelWidth = Math.min(width * 0.25, Math.max(48, ...data.map((d) => textWidth(d.metric, TYPE.label))) + 8);
  const left = labelWidth + 8;
  const right = VERDICT_WIDTH;
  const top = 22;
  const plotBottom = top + Math.max(1, data.length) * ROW;
  const height = plotBottom + 44;

  const tolerances = data.filter((d) => d.gated && Number.isFinite(d.tolerance)).map((d) => -d.tolerance);
  const values = [0, ...tolerances, ...data.flatMap((d) => [d.lo, d.hi, d.diff])].filter(Number.isFinite);
  const [min, max] = [Math.min(...values), Math.max(...values)];
  // A spread too small to tick (or none) gets a default width instead of a degenerate axis.
  const pad = (max - min > 1e-9 ? max - min : 0.1) * 0.08;
  const x = scaleLinear([min - pad, max + pad], [left, width - right - 8]).nice();
  const rowY = (_: Row, i: number) => top + i * ROW + ROW / 2;
  const colorOf = (d: Row) => (d.gated && d.verdict ? VERDICT_COLORS[d.verdict] : COLORS.neutral);
  const describe = (d: Row) =>
    `${d.metric}: ${points(d.diff)} [${points(d.lo)}, ${points(d.hi)}]` +
    (Number.isFinite(d.confidence) ? ` (${+(d.confidence * 100).toFixed(2)}% CI)` : "") +
    (d.test ? `, ${d.test}` : "") +
    (Number.isFinite(d.p) ? `, p = ${pValue(d.p)}` : "") +
    (d.gated
      ? Number.isFinite(d.tolerance)
        ? `, tolerance ${pointSize(d.tolerance)} → ${d.verdict ?? "not judged"}`
        : ", gated, no tolerance → not judged"
      : ", exploratory (not gated)");

  const children: SceneNode[] = [
    axisX(x, plotBottom, {
      format: pointsTick,
      label: "difference, points (candidate − baseline)",
      gridTo: top - 4,
      bounds: [0, width],
    }),
  ];
  const zero = ruleX(0, x, top - 6, plotBottom, {
    bounds: [0, width],
    stroke: COLORS.text,
    label: "no change",
    labelAnchor: "start",
    class: "zero",
  });
  if (zero) children.push(zero);
  // One −tolerance line across the plot when every gated metric shares it, else one short line per row.
  const shared = tolerances.length > 0 && tolerances.every((t) => t === tolerances[0]);
  if (shared) {
    const rule = ruleX(tolerances[0]!, x, top - 6, plotBottom, {
      bounds: [0, width],
      stroke: COLORS.fail,
      strokeDasharray: "4 3",
      label: `−${pointSize(tolerances[0]!)}`,
      labelAnchor: "end",
      class: "tolerance",
    });
    if (rule) children.push(rule);
  } else
    data.forEach((d, i) => {
      if (!d.gated) return;
      const rule = ruleX(-d.tolerance, x, rowY(d, i) - ROW / 2 + 3, rowY(d, i) + ROW / 2 - 3, {
        stroke: COLORS.fail,
        strokeDasharray: "4 3",
        class: "tolerance",
        tip: `${d.metric}: tolerance ${pointSize(d.tolerance)}`,
      });
      if (rule) children.push(rule);
    });
  children.push(
    ...text(data, {
      x: () => labelWidth,
      y: rowY,
      text: (d) => d.metric,
      maxWidth: labelWidth - 4,
      anchor: "end",
      baseline: "middle",
      class: "row-label",
    }),
    ...intervalX(data, {
      x,
      y: rowY,
      lo: (d) => d.lo,
      hi: (d) => d.hi,
      mid: (d) => d.diff,
      color: colorOf,
      key: (d) => d.metric,
      tip: describe,
      class: (d) => (d.gated ? `verdict-${d.verdict ?? "none"}` : "exploratory"),
    }),
    ...text(data, {
      x: () => width - right + 4,
      y: rowY,
      text: (d) => (d.gated ? (d.verdict ? VERDICT_WORD[d.verdict] : "not judged") : "exploratory"),
      maxWidth: right - 6,
      baseline: "middle",
      weight: "bold",
      size: TYPE.label,
      fill: (d) => (d.gated && d.verdict ? VERDICT_COLORS[d.verdict] : COLORS.muted),
      class: "verdict",
    }),
  );
  const gated = data.filter((d) => d.gated);
  return {
    width,
    height,
    label:
      data.length === 0
        ? "No metric was compared."
        : gated.length
          ? gated
              .map(
                (d) =>
                  `${d.metric}: ${points(d.diff)} [${points(d.lo)}, ${points(d.hi)}]` +
                  (Number.isFinite(d.tolerance)
                    ? `, tolerance ${pointSize(d.tolerance)} → ${d.verdict ?? "not judged"}`
                    : ""),
              )
              .join("; ")
          : `${data.length} exploratory metric(s), none gated`,
    description:
      "Paired differences, candidate minus baseline, with their intervals. The gate fails a metric whose whole interval lies below −tolerance (the dashed line) and passes one whose whole interval lies at or above it.",
    children,
    table: {
      caption: "Paired difference per metric (candidate − baseline)",
      columns: [
        { label: "Metric" },
        { label: "Difference", align: "right" },
        { label: "Interval", align: "right" },
        { label: "Tolerance", align: "right" },
        { label: "Verdict" },
      ],
      rows: data.map((d) => [
        d.metric,
        points(d.diff),
        `[${points(d.lo)}, ${points(d.hi)}]`,
        d.gated ? pointSize(d.tolerance) : "—",
        d.gated ? (d.verdict ?? "not judged") : "exploratory",
      ]),
    },
  };
}
