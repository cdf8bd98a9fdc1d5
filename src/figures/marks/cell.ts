import type { RectNode } from "../scene.ts";
import { finite } from "./types.ts";

export interface CellOptions {
  /** The grid's top-left corner and one cell's size in px. */
  readonly x: number;
  readonly y: number;
  readonly cellWidth: number;
  readonly cellHeight: number;
  /** The colour of a value (a colour scale the figure built once for all of its grids). */
  readonly color: (value: number) => string;
  /** The opacity of a value (default: opaque). */
  readonly opacity?: (value: number) => number;
  /** Gap between cells in px (default 0: cells touch, as an overlay needs). */
  readonly gap?: number;
  readonly tip?: (value: number, row: number, col: number) => string | undefined;
  readonly class?: string;
}

/**
 * A grid of values (row-major, `rows` × `cols`) as coloured cells, the
 * heatmap's one mark; a value that is not a finite number has no cell (the
 * background shows through), never the colour of 0.
 *
 * @example cells(map, 6, 6, { x: 0, y: 0, cellWidth: 24, cellHeight: 24, color: (v) => sequential(v / max) })
 */
export function cells(
  values: readonly (number | null)[],
  rows: number,
  cols: number,
  options: CellOptions,
): RectNode[] {
  const gap = options.gap ?? 0;
  const out: RectNode[] = [];
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const v = values[r * cols + c];
      if (typeof v !== "number" || !finite(v)) continue;
      const tip = options.tip?.(v, r, c);
      const opacity = options.opacity?.(v);
      out.push({
        type: "rect",
        class: options.class ?? "cell",
        x: options.x + c * options.cellWidth,
        y: options.y + r * options.cellHeight,
        width: Math.max(0, options.cellWidth - gap),
        height: Math.max(0, options.cellHeight - gap),
        fill: options.color(v),
        ...(opacity !== undefined && finite(opacity) ? { opacity: Math.min(1, Math.max(0, opacity)) } : {}),
        ...(tip ? { tip } : {}),
      });
    }
  return out;
}
