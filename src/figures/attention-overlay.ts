import { decimal, percent } from "./format.ts";
import { cells } from "./marks/cell.ts";
import { rampLegend } from "./marks/ramp.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { COLORS, sequential } from "./theme.ts";
import { widthOption } from "./validate.ts";

export interface AttentionOverlayOptions {
  /** The image's drawn width in px; the cells cover `width` × `height` from the top-left corner. */
  readonly width: number;
  /** The image's drawn height in px (default: the grid's aspect ratio). */
  readonly height?: number;
  readonly rows: number;
  readonly cols: number;
  /** The overlay's opacity at the largest value, 0–1 (default 0.6); smaller values fade out in proportion. */
  readonly opacity?: number;
  /** What the map is (its accessible name), e.g. "attention rollout of case pope-0001". */
  readonly label?: string;
}

const FN = "attentionOverlay";
/** Height of the legend under the image area. */
export const OVERLAY_LEGEND_HEIGHT = 40;

/**
 * Where on this image did the model look? One case's attention over the
 * image grid drawn as a CAM-style overlay: each patch coloured on the
 * cividis ramp and made more opaque the more attention it got, so the image
 * shows through where the model did not look; the renderer lays the image
 * under the area from (0, 0) to (width, height), and a legend under it reads
 * the colours back as values.
 *
 * @example attentionOverlay(rollout, { width: 192, rows: 6, cols: 6, opacity: 0.6 })
 *   // 36 cells over a 192 × 192 area, a legend under it, label "attention peaks at row 2, column 1 (12.0% of the image's attention)"
 */
export function attentionOverlay(values: readonly (number | null)[], options: AttentionOverlayOptions): Scene {
  const width = widthOption(FN, options?.width, 48);
  const { rows, cols } = options;
  for (const [name, x] of [
    ["rows", rows],
    ["cols", cols],
  ] as const)
    if (typeof x !== "number" || !Number.isInteger(x) || x < 1 || x > 256)
      throw new RangeError(`${FN}(): ${name} must be a whole number from 1 to 256, got ${String(x)}`);
  if (!Array.isArray(values) || values.length !== rows * cols)
    throw new RangeError(
      `${FN}(): values must hold rows × cols = ${rows * cols} values, got ${Array.isArray(values) ? values.length : typeof values}`,
    );
  const height = options.height ?? (width * rows) / cols;
  if (typeof height !== "number" || !Number.isFinite(height) || height <= 0)
    throw new RangeError(`${FN}(): height must be a positive number of px, got ${String(options.height)}`);
  const opacity = options.opacity ?? 0.6;
  if (typeof opacity !== "number" || !(opacity >= 0 && opacity <= 1))
    throw new RangeError(`${FN}(): opacity must lie in [0, 1], got ${String(options.opacity)}`);
  const finiteValues = values.map((v) => (typeof v === "number" && Number.isFinite(v) ? v : Number.NaN));
  const present = finiteValues.filter((v) => Number.isFinite(v));
  const max = Math.max(1e-12, ...present);
  const sum = present.reduce((a, b) => a + b, 0);
  const children: SceneNode[] = [
    {
      type: "g",
      class: "overlay-cells",
      children: cells(finiteValues, rows, cols, {
        x: 0,
        y: 0,
        cellWidth: width / cols,
        cellHeight: height / rows,
        color: (v) => sequential(v / max),
        opacity: (v) => opacity * Math.max(0, v / max),
      }),
    },
    {
      type: "rect",
      class: "overlay-frame",
      x: 0,
      y: 0,
      width,
      height,
      fill: "none",
      stroke: COLORS.line,
    },
  ];
  const legend = rampLegend({
    x: 0,
    y: height + 16,
    width,
    domain: [0, max],
    color: sequential,
    opacity: (t) => Math.max(0.15, opacity * t),
    format: (v) => decimal(v),
    label: "attention",
    bounds: [0, width],
  });
  if (legend) children.push(legend);
  let best = -1;
  finiteValues.forEach((v, k) => {
    if (Number.isFinite(v) && (best < 0 || v > finiteValues[best]!)) best = k;
  });
  const peak =
    best < 0
      ? "no attention value to draw"
      : `attention peaks at row ${Math.floor(best / cols) + 1}, column ${(best % cols) + 1}${sum > 0 ? ` (${percent(finiteValues[best]! / sum)} of the image's attention)` : ""}`;
  return {
    width,
    height: height + OVERLAY_LEGEND_HEIGHT,
    label: options.label ? `${options.label}: ${peak}` : peak,
    children,
    table: {
      caption: "Attention per image cell (row, column)",
      columns: [{ label: "Cell" }, { label: "Attention", align: "right" }, { label: "Share", align: "right" }],
      rows: finiteValues.map((v, k) => [
        `row ${Math.floor(k / cols) + 1}, column ${(k % cols) + 1}`,
        decimal(v),
        sum > 0 ? percent(v / sum) : "—",
      ]),
    },
  };
}
