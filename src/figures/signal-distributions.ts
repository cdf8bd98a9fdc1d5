import { scaleLinear } from "d3-scale";
import { count, decimal, percent } from "./format.ts";
import { axisX, axisY } from "./marks/axis.ts";
import { barX } from "./marks/bar-x.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { fitText, textWidth } from "./text-width.ts";
import { COLORS, TYPE } from "./theme.ts";
import { rowsOf, textField, widthOption } from "./validate.ts";

/** A signal's values by label: a histogram over shared bin edges, or (binary signals) failures with and without it. */
export type SignalDistributionData =
  | {
      readonly type: "histogram";
      /** k + 1 edges (a null edge: not finite, that bin is not drawn). */
      readonly edges: readonly (number | null)[];
      /** Cases per bin, failing and passing. */
      readonly fail: readonly number[];
      readonly pass: readonly number[];
    }
  | {
      readonly type: "counts";
      /** [failures, cases] where the signal is present, and where it is absent. */
      readonly withSignal: readonly [number, number];
      readonly without: readonly [number, number];
    };

export interface SignalDistribution {
  readonly signal: string;
  /** A short line under the name (its effect, its hypothesis). */
  readonly note?: string;
  readonly data: SignalDistributionData;
}

export interface SignalDistributionOptions {
  readonly width: number;
  /** Panels per row (default: as many as fit at about 300 px each, at most 3). */
  readonly columns?: number;
}

const FN = "signalDistributions";
const PANEL_HEIGHT = 164;
/** Labels are fitted short of their room: the page's sans serif can run ~10% wider than the width table. */
const ROOM = 0.9;

const total = (xs: readonly number[]) => xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);

function checkData(path: string, d: unknown): SignalDistributionData {
  const r = d as Record<string, unknown> | null;
  if (!r || typeof r !== "object") throw new TypeError(`${FN}(): ${path} must be an object, got ${typeof d}`);
  const numbers = (name: string, x: unknown) => {
    if (!Array.isArray(x) || x.some((v) => v !== null && typeof v !== "number"))
      throw new TypeError(`${FN}(): ${path}.${name} must be an array of numbers`);
    return x as (number | null)[];
  };
  if (r.type === "histogram") {
    const edges = numbers("edges", r.edges);
    const fail = numbers("fail", r.fail).map((v) => v ?? Number.NaN);
    const pass = numbers("pass", r.pass).map((v) => v ?? Number.NaN);
    if (fail.length !== pass.length || edges.length !== fail.length + 1)
      throw new RangeError(
        `${FN}(): ${path} must have one more edge than bins and as many fail as pass counts, got ${edges.length} edges, ${fail.length} fail and ${pass.length} pass`,
      );
    return { type: "histogram", edges, fail, pass };
  }
  if (r.type === "counts") {
    const pair = (name: string, x: unknown): [number, number] => {
      const v = numbers(name, x);
      if (v.length !== 2) throw new RangeError(`${FN}(): ${path}.${name} must be [failures, cases]`);
      return [v[0] ?? Number.NaN, v[1] ?? Number.NaN];
    };
    return { type: "counts", withSignal: pair("withSignal", r.withSignal), without: pair("without", r.without) };
  }
  throw new TypeError(`${FN}(): ${path}.type must be "histogram" or "counts", got ${JSON.stringify(r.type)}`);
}

/**
 * How do failing and passing cases differ on each signal? One small panel
 * per signal: a numeric signal's histogram as the share of failing and of
 * passing cases in each bin (side by side, so two groups of very different
 * sizes compare), a binary signal's failure rate where it is present and
 * where it is absent, with the counts written out.
 *
 * @example signalDistributions([{ signal: "tokenEntropy.answer", data: { type: "histogram", edges: [0, 0.5, 1], fail: [2, 8], pass: [40, 10] } }], { width: 720 })
 *   // one panel: failing cases mostly in [0.5, 1], passing ones in [0, 0.5)
 */
export function signalDistributions(signals: readonly SignalDistribution[], options: SignalDistributionOptions): Scene {
  const width = widthOption(FN, options?.width, 260);
  const data = rowsOf<SignalDistribution>(FN, "signals", signals).map((s, i) => ({
    signal: textField(FN, `signals[${i}].signal`, s.signal),
    note: s.note === undefined ? "" : textField(FN, `signals[${i}].note`, s.note),
    data: checkData(`signals[${i}].data`, s.data),
  }));
  const columns = Math.max(
    1,
    Math.min(options.columns ?? Math.min(3, Math.floor(width / 300)), Math.max(1, data.length)),
  );
  const gap = 24;
  const panelWidth = (width - gap * (columns - 1)) / columns;
  const legendHeight = 24;
  const children: SceneNode[] = [];
  const tableRows: string[][] = [];

  // Legend: the two colours, said in words.
  let lx = 0;
  for (const [name, color, cls] of [
    ["failing cases", COLORS.fail, "legend-fail"],
    ["passing cases", COLORS.pass, "legend-pass"],
  ] as const) {
    children.push(
      { type: "rect", class: cls, x: lx, y: 5, width: 10, height: 10, fill: color },
      { type: "text", class: "legend", x: lx + 14, y: 10, text: name, baseline: "middle", fill: COLORS.text },
    );
    lx += 14 + textWidth(name, TYPE.small) + 16;
  }
  const note = fitText("bars: share of each group's cases", Math.max(20, width - lx), TYPE.small);
  children.push({
    type: "text",
    class: "legend",
    x: width,
    y: 10,
    text: note.text,
    anchor: "end",
    baseline: "middle",
    fill: COLORS.muted,
  });

  data.forEach((s, i) => {
    const x0 = (i % columns) * (panelWidth + gap);
    const y0 = legendHeight + Math.floor(i / columns) * (PANEL_HEIGHT + 16);
    const title = fitText(s.signal, panelWidth * ROOM, TYPE.label);
    children.push({
      type: "text",
      class: "panel-title",
      x: x0,
      y: y0 + 10,
      text: title.text,
      baseline: "middle",
      size: TYPE.label,
      weight: "bold",
      fill: COLORS.text,
      ...(title.cut ? { tip: s.signal } : {}),
    });
    if (s.note) {
      const n = fitText(s.note, panelWidth * ROOM, TYPE.small);
      children.push({
        type: "text",
        class: "panel-note",
        x: x0,
        y: y0 + 25,
        text: n.text,
        baseline: "middle",
        fill: COLORS.muted,
        ...(n.cut ? { tip: s.note } : {}),
      });
    }
    const plotTop = y0 + 46;
    const plotBottom = y0 + PANEL_HEIGHT - 22;
    const group: SceneNode[] = [];
    if (s.data.type === "histogram") {
      const { edges, fail, pass } = s.data;
      const nf = total(fail);
      const np = total(pass);
      const finiteEdges = edges.filter((e): e is number => typeof e === "number" && Number.isFinite(e));
      const lo = Math.min(...finiteEdges);
      const hi = Math.max(...finiteEdges);
      const x = scaleLinear([lo, hi > lo ? hi : lo + 1], [x0 + 40, x0 + panelWidth - 4]);
      const shares = fail.map((f, k) => [nf ? f / nf : Number.NaN, np ? pass[k]! / np : Number.NaN] as const);
      const top = Math.max(0.01, ...shares.flat().filter((v) => Number.isFinite(v)));
      const y = scaleLinear([0, top], [plotBottom, plotTop]).nice(3);
      group.push(axisY(y, x0 + 40, { ticks: 3, format: ".0%", bounds: [x0, x0 + panelWidth] }));
      group.push(axisX(x, plotBottom, { ticks: 4, bounds: [x0, x0 + panelWidth] }));
      fail.forEach((f, k) => {
        const a = edges[k];
        const b = edges[k + 1];
        if (typeof a !== "number" || typeof b !== "number" || !Number.isFinite(a) || !Number.isFinite(b)) return;
        const left = x(a);
        const w = Math.max(0, x(b) - left);
        const range = `${decimal(a)} to ${decimal(b)}`;
        const [sf, sp] = shares[k]!;
        for (const [share, cases, groupSize, color, cls, offset] of [
          [sf, f, nf, COLORS.fail, "fail", 0],
          [sp, pass[k]!, np, COLORS.pass, "pass", w / 2],
        ] as const) {
          if (!Number.isFinite(share)) continue;
          group.push({
            type: "rect",
            class: `bar ${cls}`,
            x: left + offset + 0.5,
            y: y(share),
            width: Math.max(0, w / 2 - 1),
            height: Math.max(0, plotBottom - y(share)),
            fill: color,
            tip: `${s.signal} in ${range}: ${count(cases)} of ${count(groupSize)} ${cls}ing cases (${percent(share)})`,
          });
        }
        tableRows.push([s.signal, range, count(f), count(pass[k]!)]);
      });
    } else {
      const [fw, tw] = s.data.withSignal;
      const [fo, to] = s.data.without;
      const bars = [
        { name: "present", failures: fw, cases: tw },
        { name: "absent", failures: fo, cases: to },
      ].map((b) => ({ ...b, rate: b.cases > 0 ? b.failures / b.cases : Number.NaN }));
      const top = Math.max(0.05, ...bars.map((b) => b.rate).filter((v) => Number.isFinite(v)));
      const labelRoom = 48;
      const textRoom = 92;
      const x = scaleLinear([0, top], [x0 + labelRoom, x0 + panelWidth - textRoom]).nice(3);
      group.push(axisX(x, plotBottom, { ticks: 3, format: ".0%", bounds: [x0, x0 + panelWidth] }));
      const band = (plotBottom - plotTop) / 2;
      bars.forEach((b, k) => {
        const rowY = plotTop + k * band + band / 2;
        group.push({
          type: "text",
          class: "row-label",
          x: x0 + labelRoom - 6,
          y: rowY,
          text: b.name,
          anchor: "end",
          baseline: "middle",
          fill: COLORS.text,
        });
        group.push(
          ...barX([b], {
            x,
            value: (d) => d.rate,
            y: () => rowY - 9,
            height: 18,
            fill: () => COLORS.fail,
            class: () => "fail",
            tip: (d) =>
              `${s.signal} ${d.name}: ${count(d.failures)} of ${count(d.cases)} cases fail (${percent(d.rate)})`,
          }),
        );
        if (Number.isFinite(b.rate))
          group.push({
            type: "text",
            class: "counts",
            x: x(b.rate) + 4,
            y: rowY,
            text: `${count(b.failures)} of ${count(b.cases)} fail`,
            baseline: "middle",
            fill: COLORS.muted,
          });
        tableRows.push([s.signal, b.name, count(b.failures), count(b.cases - b.failures)]);
      });
      // What the axis measures, left of its tick labels (the note line above is the panel's).
      group.push({
        type: "text",
        class: "axis-note",
        x: x0 + labelRoom - 6,
        y: plotBottom + 6,
        text: "failures",
        anchor: "end",
        baseline: "hanging",
        fill: COLORS.muted,
      });
    }
    children.push({ type: "g", class: "panel", key: s.signal, children: group });
  });
  const rowsOfPanels = Math.ceil(data.length / columns);
  const height = legendHeight + Math.max(1, rowsOfPanels) * (PANEL_HEIGHT + 16);
  return {
    width,
    height,
    label:
      data.length === 0
        ? "No signal distribution to draw."
        : `Failing and passing cases on ${data.length} signal${data.length === 1 ? "" : "s"}: ${data
            .slice(0, 4)
            .map((d) => d.signal)
            .join(", ")}${data.length > 4 ? ", …" : ""}`,
    children,
    table: {
      caption: "Cases per bin (or with and without the signal), failing and passing",
      columns: [
        { label: "Signal" },
        { label: "Bin or group" },
        { label: "Failing cases", align: "right" },
        { label: "Passing cases", align: "right" },
      ],
      rows: tableRows,
    },
  };
}
