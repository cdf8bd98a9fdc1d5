import { scaleLinear, scaleLog } from "d3-scale";
import { count, eValue, pValue } from "../../../figures/format.ts";
import { axisX, axisY } from "../../../figures/marks/axis.ts";
import { dot } from "../../../figures/marks/dot.ts";
import { line } from "../../../figures/marks/line.ts";
import { ruleY } from "../../../figures/marks/rule.ts";
import type { Scene, SceneNode } from "../../../figures/scene.ts";
import { textWidth } from "../../../figures/text-width.ts";
import { COLORS } from "../../../figures/theme.ts";
import type { ExploreView, SignalRow } from "./stages.ts";

/** e-values are drawn on a log axis from this floor (an e of 0 — no evidence — sits on it). */
const FLOOR = 0.01;

/**
 * How strong is each signal's evidence on the exploration split, and how far
 * is it from what e-BH over every signal tried would need? Each tested
 * signal's e-value by its rank (largest first) on a log axis, the screened
 * ones (which go on to M3) in the accent colour, and the e-BH line m/(α·k):
 * e-BH at α would reject the signals ranked at or before the last one above
 * that line. M2 makes no claim: the line is drawn for reference, the screen
 * decides; M4 pays multiplicity for the few frozen hypotheses alone.
 *
 * @example signalEvalues(exploreView(events), { width: 640 }).label // "e-values of 33 signals on the exploration split, by rank, with the e-BH line at α = 0.05"
 */
export function signalEvalues(view: ExploreView, options: { readonly width: number }): Scene {
  const width = Math.max(320, options.width);
  const rows = view.rows.filter((r) => Number.isFinite(r.rank));
  const m = view.tried ?? rows.length;
  const left = 56;
  const right = 16;
  // The legend in words, on its own lines above the y-axis title: what the colours and the dashed line are.
  const legend = legendRows(
    [
      { mark: "dot", colour: COLORS.accent, text: "screened in (to M3)" },
      { mark: "dot", colour: COLORS.muted, text: "not screened in" },
      { mark: "dash", colour: COLORS.fail, text: "e-BH line m/(α·k)" },
    ],
    left,
    width - right,
  );
  const top = legend.bottom + 34;
  const bottom = top + 140;
  const height = bottom + 44;
  const shown = (e: number) => Math.max(FLOOR, Number.isFinite(e) ? e : FLOOR);
  const highest = Math.max(10, ...rows.map((r) => shown(r.e)), m > 0 ? m / view.alpha : 10);
  const x = scaleLinear([0.5, Math.max(1, rows.length) + 0.5], [left, width - right]);
  const y = scaleLog([FLOOR, highest], [bottom, top]).nice();
  const children: SceneNode[] = [
    axisY(y, left, {
      values: [0.01, 0.1, 1, 10, 100, 1000, 10000].filter((v) => v <= y.domain()[1]!),
      format: (v) => (v >= 1 ? count(v) : String(v)),
      gridTo: width - right,
      label: "e-value (log scale)",
    }),
    axisX(x, bottom, {
      values: rows.length <= 12 ? rows.map((r) => r.rank) : undefined,
      format: (v) => count(v),
      label: "rank by e-value",
      bounds: [0, width],
    }),
  ];
  const one = ruleY(1, y, left, width - right, {
    stroke: COLORS.muted,
    strokeDasharray: "2 3",
    label: "e = 1: no evidence",
    labelAnchor: "end",
    bounds: [0, width],
  });
  if (one) children.push(one);
  const bars = rows.map((r) => ({ rank: r.rank, bar: r.ebhBar }));
  const ebh = line(bars, {
    x,
    y,
    xValue: (d) => d.rank,
    yValue: (d) => Math.min(d.bar, y.domain()[1]!),
    stroke: COLORS.fail,
    strokeDasharray: "5 3",
    class: "ebh",
    tip: `e-BH line m/(α·k) with m = ${m} signals and α = ${view.alpha}: a signal ranked k would need e ≥ ${eValue(m / view.alpha)}/k`,
  });
  if (ebh) children.push(ebh);
  children.push({ type: "g", class: "legend", children: legend.nodes });
  children.push(
    ...dot(rows, {
      x,
      y,
      xValue: (r) => r.rank,
      yValue: (r) => shown(r.e),
      r: 4,
      fill: (r) => (r.selected ? COLORS.accent : COLORS.muted),
      class: "signal",
      key: (r) => r.signal,
      tip: (r) => tipOf(r),
    }),
  );
  return {
    width,
    height,
    label: `e-values of ${rows.length} signals on the exploration split, by rank, with the e-BH line at α = ${view.alpha}`,
    description: `${view.selected.length} signal(s) passed the screen and go on to M3; e-BH over all ${m} tried would reject ${view.ebhRejections}. The screen selects, it does not decide: M4 decides on the sealed split.`,
    children,
    table: {
      caption: "Signals by e-value on the exploration split",
      columns: [
        { label: "rank", align: "right" },
        { label: "signal" },
        { label: "e", align: "right" },
        { label: "e-BH bar m/(α·k)", align: "right" },
        { label: "p", align: "right" },
        { label: "screened in" },
      ],
      rows: rows.map((r) => [
        count(r.rank),
        r.signal,
        eValue(r.e),
        eValue(r.ebhBar),
        pValue(r.p),
        r.selected ? "yes" : "no",
      ]),
    },
  };
}

function tipOf(r: SignalRow): string {
  return `#${r.rank} ${r.signal}: e = ${eValue(r.e)} (bar ${eValue(r.ebhBar)}), p = ${pValue(r.p)}${r.selected ? ", screened in" : ""}`;
}

/** Legend items laid out left to right from `x0`, wrapping before `x1`; `bottom` is the last row's y. */
function legendRows(
  items: readonly { readonly mark: "dot" | "dash"; readonly colour: string; readonly text: string }[],
  x0: number,
  x1: number,
): { nodes: SceneNode[]; bottom: number } {
  const size = 11;
  const nodes: SceneNode[] = [];
  let x = x0;
  let y = 10;
  for (const item of items) {
    const mark = item.mark === "dot" ? 8 : 24;
    const w = mark + 6 + textWidth(item.text, size);
    if (x > x0 && x + w > x1) {
      x = x0;
      y += 16;
    }
    if (item.mark === "dot") nodes.push({ type: "circle", cx: x + 4, cy: y, r: 4, fill: item.colour });
    else nodes.push({ type: "line", x1: x, y1: y, x2: x + mark, y2: y, stroke: item.colour, strokeDasharray: "5 3" });
    nodes.push({ type: "text", x: x + mark + 6, y, text: item.text, baseline: "middle", size, fill: COLORS.text });
    x += w + 18;
  }
  return { nodes, bottom: y };
}
