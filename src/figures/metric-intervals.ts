import { scaleLinear } from "d3-scale";
import { count, percent, shareInterval } from "./format.ts";
import { axisX } from "./marks/axis.ts";
import { intervalX } from "./marks/interval.ts";
import { text } from "./marks/text.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { fitText, textWidth } from "./text-width.ts";
import { CATEGORICAL, COLORS, TYPE } from "./theme.ts";
import { numberField, rowsOf, textField, widthOption } from "./validate.ts";

/** One metric's estimate with its interval (of one run, or of one series when several are drawn). */
export interface MetricIntervalRow {
  readonly metric: string;
  /** Which run (or group) the row belongs to, when several are drawn per metric. */
  readonly series?: string;
  /** The share (0–1) and its interval. */
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly n?: number;
  /** How the interval was computed (e.g. "wilson", "cluster-se"). */
  readonly method?: string;
}

export interface MetricIntervalOptions {
  /** Width in px (the height follows from the rows). */
  readonly width: number;
  /** What the shares are (axis title; default "share of cases passing"). */
  readonly valueLabel?: string;
  /** Colours per series, in order of first appearance (default: the categorical palette). */
  readonly colors?: readonly string[];
}

const FN = "metricIntervals";
const ROW = 30;
const SERIES_GAP = 10;

/**
 * How well did a run do on each metric, and how sure is that? Each metric's
 * share with its interval as a dot on a line, on one shared axis of shares;
 * with several series (two runs) their rows sit side by side under one
 * label, in the order given, with a legend. A metric whose estimate is not a
 * finite number has no mark (its table row reads "—").
 *
 * @example metricIntervals([{ metric: "pass", mean: 0.81, lo: 0.75, hi: 0.86, n: 200, method: "wilson" }], { width: 640 })
 *   // { width: 640, height: 86, label: "pass: 81.0% [75.0%, 86.0%], n = 200 (wilson)", table: { rows: [["pass", "81.0%", "[75.0%, 86.0%]", "200", "wilson"]] }, … }
 */
export function metricIntervals(rows: readonly MetricIntervalRow[], options: MetricIntervalOptions): Scene {
  const width = widthOption(FN, options?.width);
  const data = rowsOf<MetricIntervalRow>(FN, "rows", rows).map((r, i) => ({
    metric: textField(FN, `rows[${i}].metric`, r.metric),
    series: r.series === undefined ? "" : textField(FN, `rows[${i}].series`, r.series),
    mean: numberField(FN, `rows[${i}].mean`, r.mean),
    lo: numberField(FN, `rows[${i}].lo`, r.lo),
    hi: numberField(FN, `rows[${i}].hi`, r.hi),
    n: numberField(FN, `rows[${i}].n`, r.n, true),
    method: r.method === undefined ? "" : textField(FN, `rows[${i}].method`, r.method),
  }));
  const metrics = [...new Set(data.map((d) => d.metric))];
  const series = [...new Set(data.map((d) => d.series))];
  const palette = options.colors ?? CATEGORICAL;
  const colorOf = (s: string) => palette[series.indexOf(s) % palette.length] ?? COLORS.text;
  const legend = series.length > 1 || series[0] !== "";

  const labelWidth = Math.min(width * 0.3, Math.max(48, ...metrics.map((m) => textWidth(m, TYPE.label))) + 8);
  const left = labelWidth + 8;
  const right = 16;
  const top = legend ? 30 : 12;
  const band = Math.max(ROW, series.length * SERIES_GAP + 14);
  const plotBottom = top + metrics.length * band;
  const height = plotBottom + 44;

  // Shares: pad the data's extent a little, but not past 0 or 1 unless the data itself is.
  const values = data.flatMap((d) => [d.lo, d.hi, d.mean]).filter(Number.isFinite);
  const [min, max] = values.length ? [Math.min(...values), Math.max(...values)] : [0, 1];
  const lo = Math.min(min, Math.max(0, min - 0.05));
  const hi = Math.max(max, Math.min(1, max + 0.05));
  const x = scaleLinear([lo, hi === lo ? lo + 1 : hi], [left, width - right]).nice();
  const rowY = (d: (typeof data)[number]) => {
    const m = metrics.indexOf(d.metric);
    const s = series.indexOf(d.series);
    return top + m * band + band / 2 + (s - (series.length - 1) / 2) * SERIES_GAP;
  };
  const describe = (d: (typeof data)[number]) =>
    `${d.series ? `${d.series} · ` : ""}${d.metric}: ${percent(d.mean)} ${shareInterval(d.lo, d.hi)}` +
    (Number.isFinite(d.n) ? `, n = ${count(d.n)}` : "") +
    (d.method ? ` (${d.method})` : "");

  const children: SceneNode[] = [
    axisX(x, plotBottom, {
      format: ".0%",
      label: options.valueLabel ?? "share of cases passing",
      gridTo: top - 4,
      bounds: [0, width],
    }),
    ...text(metrics, {
      x: () => labelWidth,
      y: (m) => top + metrics.indexOf(m) * band + band / 2,
      text: (m) => m,
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
      mid: (d) => d.mean,
      color: (d) => colorOf(d.series),
      key: (d) => `${d.series}|${d.metric}`,
      tip: describe,
      cap: series.length > 1 ? 6 : 8,
    }),
  ];
  if (legend) {
    // Each entry gets an equal share of the row; a name that does not fit is cut (its full name is its tip).
    const slot = (width - left - right) / series.length;
    series.forEach((s, i) => {
      const at = left + i * slot;
      const name = fitText(s || "—", slot - 20, TYPE.small);
      children.push({ type: "circle", class: "legend-swatch", cx: at + 4, cy: 12, r: 4, fill: colorOf(s) });
      children.push({
        type: "text",
        class: "legend",
        x: at + 12,
        y: 12,
        text: name.text,
        baseline: "middle",
        fill: COLORS.text,
        ...(name.cut ? { tip: s } : {}),
      });
    });
  }
  const finiteRows = data.filter((d) => Number.isFinite(d.mean));
  return {
    width,
    height,
    label:
      finiteRows.length === 0
        ? "No metric has an estimate to draw."
        : finiteRows.length <= 3
          ? finiteRows.map(describe).join("; ")
          : `${metrics.length} metrics with their intervals, ${finiteRows.length} estimates`,
    children,
    table: {
      caption: "Each metric's share with its interval",
      columns: [
        ...(legend ? [{ label: "Series" }] : []),
        { label: "Metric" },
        { label: "Share", align: "right" as const },
        { label: "Interval", align: "right" as const },
        { label: "n", align: "right" as const },
        { label: "Method" },
      ],
      rows: data.map((d) => [
        ...(legend ? [d.series || "—"] : []),
        d.metric,
        percent(d.mean),
        shareInterval(d.lo, d.hi),
        count(d.n),
        d.method || "—",
      ]),
    },
  };
}
