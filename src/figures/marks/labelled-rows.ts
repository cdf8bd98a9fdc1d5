import type { RectNode, TextNode } from "../scene.ts";
import { COLORS, TYPE } from "../theme.ts";
import { wrapText } from "../wrap-text.ts";

/** One row of a figure whose rows are labelled on the left: where it lies, and its label's lines. */
export interface LabelledRow<T> {
  readonly datum: T;
  /** The full label (the tip of its lines when they had to be cut). */
  readonly label: string;
  readonly lines: readonly string[];
  readonly cut: boolean;
  readonly top: number;
  readonly height: number;
  /** The row's vertical centre in px: where its marks go. */
  readonly mid: number;
}

export interface LabelledRowOptions<T> {
  readonly label: (d: T) => string;
  /** The label column's width in px; labels wrap onto lines within it. */
  readonly width: number;
  /** Where the first row starts (px). */
  readonly top: number;
  readonly maxLines?: number;
  /** The least height of a row (px) and the padding around its lines. */
  readonly minHeight?: number;
  readonly padding?: number;
}

const LINE = 14;

/**
 * Lays rows out down a figure, each as tall as its wrapped label needs (at
 * least `minHeight`): the layout the forest plot and the repair ladder share.
 * Labels wrap short of the column (the page's sans serif can run ~10% wider
 * than the width table) and keep their full text when cut.
 *
 * @example labelledRows(hypotheses, { label: (h) => h.label, width: 220, top: 48 })
 *   // [{ datum: H1, lines: ["H1 logitLens.", "answerProb.S2"], top: 48, height: 38, mid: 67, … }, …]
 */
export function labelledRows<T>(
  data: readonly T[],
  options: LabelledRowOptions<T>,
): { rows: LabelledRow<T>[]; bottom: number } {
  let top = options.top;
  const rows = data.map((datum) => {
    const label = options.label(datum);
    const wrapped = wrapText(label, options.width * 0.88, TYPE.label, options.maxLines ?? 3);
    const height = Math.max(options.minHeight ?? 36, wrapped.lines.length * LINE + (options.padding ?? 10));
    const row = { datum, label, lines: wrapped.lines, cut: wrapped.cut, top, height, mid: top + height / 2 };
    top += height;
    return row;
  });
  return { rows, bottom: top };
}

/**
 * A faint band behind every other row, so a label can be followed across to its marks.
 *
 * @example rowBands(rows, 720) // rects behind rows 1, 3, 5 …
 */
export function rowBands(rows: readonly LabelledRow<unknown>[], width: number): RectNode[] {
  return rows
    .filter((_, i) => i % 2 === 0)
    .map((r) => ({ type: "rect", class: "row-band", x: 0, y: r.top, width, height: r.height, fill: COLORS.panel }));
}

/**
 * Each row's label, its lines centred on the row, from `x` (left-aligned).
 *
 * @example rowLabels(rows) // text nodes "H1 logitLens." and "answerProb.S2", both tipped with the full label when cut
 */
export function rowLabels(rows: readonly LabelledRow<unknown>[], x = 0): TextNode[] {
  return rows.flatMap((r) =>
    r.lines.map((line, k): TextNode => ({
      type: "text",
      class: "row-label",
      x,
      y: r.mid - ((r.lines.length - 1) * LINE) / 2 + k * LINE,
      text: line,
      baseline: "middle",
      size: TYPE.label,
      fill: COLORS.text,
      ...(r.cut ? { tip: r.label } : {}),
    })),
  );
}
