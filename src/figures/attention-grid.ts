import { decimal, percent } from "./format.ts";
import { cells } from "./marks/cell.ts";
import { rampLegend } from "./marks/ramp.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { fitText } from "./text-width.ts";
import { COLORS, TYPE, sequential } from "./theme.ts";
import { rowsOf, textField, widthOption } from "./validate.ts";

/** One map over the image grid (row-major, rows × cols; null: no value there). */
export interface AttentionMap {
  readonly label: string;
  readonly values: readonly (number | null)[];
}

export interface AttentionGridOptions {
  readonly width: number;
  readonly rows: number;
  readonly cols: number;
  /** What a value is (the legend's title; default "attention"). */
  readonly valueLabel?: string;
}

const FN = "attentionGrid";

function gridSize(fn: string, name: string, x: unknown): number {
  if (typeof x !== "number" || !Number.isInteger(x) || x < 1 || x > 256)
    throw new RangeError(`${fn}(): ${name} must be a whole number from 1 to 256, got ${String(x)}`);
  return x;
}

/**
 * Where on the image does the model look, and does that differ between
 * groups of cases? Each map (e.g. the mean attention rollout of failing and
 * of passing cases) as a heatmap over the image's patch grid, side by side on
 * one colour scale (cividis: darker is less, lighter is more) with its
 * legend, each cell's value in its tip.
 *
 * @example attentionGrid([{ label: "failures", values: fail }, { label: "passes", values: pass }], { width: 640, rows: 6, cols: 6 })
 *   // two 6 × 6 heatmaps on one scale, and a legend from 0 to the largest value
 */
export function attentionGrid(maps: readonly AttentionMap[], options: AttentionGridOptions): Scene {
  const width = widthOption(FN, options?.width, 240);
  const rows = gridSize(FN, "rows", options.rows);
  const cols = gridSize(FN, "cols", options.cols);
  const data = rowsOf<AttentionMap>(FN, "maps", maps).map((m, i) => {
    const label = textField(FN, `maps[${i}].label`, m.label);
    if (!Array.isArray(m.values) || m.values.length !== rows * cols)
      throw new RangeError(
        `${FN}(): maps[${i}].values must hold rows × cols = ${rows * cols} values, got ${Array.isArray(m.values) ? m.values.length : typeof m.values}`,
      );
    return { label, values: m.values.map((v) => (typeof v === "number" && Number.isFinite(v) ? v : Number.NaN)) };
  });
  const gap = 28;
  const count = Math.max(1, data.length);
  const panel = Math.min(220, (width - gap * (count - 1)) / count);
  const cell = panel / Math.max(rows, cols);
  const gridHeight = cell * rows;
  const max = Math.max(1e-12, ...data.flatMap((m) => m.values).filter((v) => Number.isFinite(v)));
  const valueLabel = options.valueLabel ?? "attention";
  const children: SceneNode[] = [];
  data.forEach((m, i) => {
    const x0 = i * (panel + gap);
    const sum = m.values.filter((v) => Number.isFinite(v)).reduce((a, b) => a + b, 0);
    const title = fitText(m.label, panel, TYPE.label);
    children.push({
      type: "text",
      class: "panel-title",
      x: x0,
      y: 10,
      text: title.text,
      baseline: "middle",
      size: TYPE.label,
      weight: "bold",
      fill: COLORS.text,
      ...(title.cut ? { tip: m.label } : {}),
    });
    children.push({
      type: "rect",
      class: "grid-frame",
      x: x0,
      y: 22,
      width: cell * cols,
      height: gridHeight,
      fill: COLORS.panel,
    });
    children.push({
      type: "g",
      class: "heatmap",
      key: m.label,
      children: cells(m.values, rows, cols, {
        x: x0,
        y: 22,
        cellWidth: cell,
        cellHeight: cell,
        gap: 1,
        color: (v) => sequential(v / max),
        tip: (v, r, c) =>
          `${m.label} · row ${r + 1}, column ${c + 1}: ${decimal(v)}${sum > 0 ? ` (${percent(v / sum)} of this map)` : ""}`,
      }),
    });
  });
  const legendY = 22 + gridHeight + 22;
  const legend = rampLegend({
    x: 0,
    y: legendY,
    width: Math.min(200, width),
    domain: [0, max],
    color: sequential,
    format: (v) => decimal(v),
    label: `${valueLabel}: darker is less, lighter is more`,
    labelWidth: width * 0.9,
    bounds: [0, width],
  });
  if (legend) children.push(legend);
  const peak = (m: (typeof data)[number]) => {
    let best = -1;
    m.values.forEach((v, k) => {
      if (Number.isFinite(v) && (best < 0 || v > m.values[best]!)) best = k;
    });
    return best < 0 ? "no value" : `peak at row ${Math.floor(best / cols) + 1}, column ${(best % cols) + 1}`;
  };
  return {
    width,
    height: legendY + 34,
    label:
      data.length === 0
        ? "No attention map to draw."
        : `${valueLabel} over the ${rows} × ${cols} image grid: ${data.map((m) => `${m.label} ${peak(m)}`).join("; ")}`,
    children,
    table: {
      caption: `${valueLabel} per image cell (row, column)`,
      columns: [{ label: "Cell" }, ...data.map((m) => ({ label: m.label, align: "right" as const }))],
      rows: Array.from({ length: rows * cols }, (_, k) => [
        `row ${Math.floor(k / cols) + 1}, column ${(k % cols) + 1}`,
        ...data.map((m) => decimal(m.values[k]!)),
      ]),
    },
  };
}
