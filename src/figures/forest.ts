import { scaleLinear } from "d3-scale";
import { decimal } from "./format.ts";
import { axisX } from "./marks/axis.ts";
import { intervalX } from "./marks/interval.ts";
import { labelledRows, rowBands, rowLabels } from "./marks/labelled-rows.ts";
import { ruleX } from "./marks/rule.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { fitText, textWidth } from "./text-width.ts";
import { COLORS, TYPE } from "./theme.ts";
import { rowsOf, textField, numberField, widthOption } from "./validate.ts";

/** An effect with its interval (null or missing: not measured; its mark is left out). */
export interface ForestInterval {
  readonly value: number | null;
  readonly lo: number | null;
  readonly hi: number | null;
}

/** One hypothesis: its effect on the exploration split (where it was chosen) and on the sealed split (where it was decided). */
export interface ForestRow {
  /** Short id ("H1"): the row's key. */
  readonly id: string;
  /** The full label (id, signal, direction): wrapped onto lines, never cut without its tip. */
  readonly label: string;
  /** The effect's kind ("AUC", "risk difference", "Spearman ρ"): one panel, with its own scale, per kind. */
  readonly effect: string;
  /** The effect's value under no association (0.5 for an AUC, 0 for a difference or a correlation). */
  readonly nullValue: number;
  readonly explore: ForestInterval;
  readonly sealed?: ForestInterval | null;
  /** Did the sealed e-value survive e-BH (undefined or null: not decided)? */
  readonly ebh?: boolean | null;
  /** The verdict's word (SUPPORTED, REFUTED, INCONCLUSIVE). */
  readonly verdict?: string;
}

export interface ForestOptions {
  /** Width in px (the height follows from the rows and panels). */
  readonly width: number;
}

const FN = "forest";

/** The range an effect kind can take: AUCs are shares, differences and correlations lie in [−1, 1]. */
function bounds(effect: string): readonly [number, number] {
  if (/auc/i.test(effect)) return [0, 1];
  if (/difference|ρ|rho|correlation|spearman/i.test(effect)) return [-1, 1];
  return [-Infinity, Infinity];
}

const verdictColor = (v: string | undefined) =>
  v === "SUPPORTED" ? COLORS.pass : v === "REFUTED" ? COLORS.fail : v ? COLORS.warn : COLORS.muted;

function interval(fn: string, path: string, x: unknown): ForestInterval | null {
  if (x === undefined || x === null) return null;
  if (typeof x !== "object" || Array.isArray(x))
    throw new TypeError(`${fn}(): ${path} must be an object, got ${typeof x}`);
  const r = x as Record<string, unknown>;
  const n = (k: string) => (r[k] === null ? Number.NaN : numberField(fn, `${path}.${k}`, r[k], true));
  return { value: n("value"), lo: n("lo"), hi: n("hi") };
}

const show = (i: ForestInterval | null | undefined) =>
  i && Number.isFinite(i.value ?? Number.NaN) ? `${decimal(i.value)} [${decimal(i.lo)}, ${decimal(i.hi)}]` : "—";

/**
 * Which hypotheses held on the sealed split, by how much, and how sure is
 * that? Each hypothesis' effect with its 95% interval against the null —
 * the exploration interval (where it was chosen, so selection inflates it)
 * above the sealed one (where it was decided) — with one panel per effect
 * kind, each on its own scale (an AUC and a risk difference are not
 * comparable), full labels wrapped beside the rows, and each row's verdict
 * and whether its e-value survived e-BH.
 *
 * @example forest([{ id: "H1", label: "H1 tokenEntropy.answer: higher in failures", effect: "AUC", nullValue: 0.5, explore: { value: 0.83, lo: 0.76, hi: 0.9 }, sealed: { value: 0.8, lo: 0.7, hi: 0.88 }, ebh: true, verdict: "SUPPORTED" }], { width: 720 })
 *   // { width: 720, height: 150, label: "1 hypothesis in 1 panel (AUC): 1 SUPPORTED", table: { rows: [["H1", "AUC", "0.5", "0.83 [0.76, 0.9]", "0.8 [0.7, 0.88]", "yes", "SUPPORTED"]] }, … }
 */
export function forest(rows: readonly ForestRow[], options: ForestOptions): Scene {
  const width = widthOption(FN, options?.width, 320);
  const data = rowsOf<ForestRow>(FN, "rows", rows).map((r, i) => {
    const p = `rows[${i}]`;
    const explore = interval(FN, `${p}.explore`, r.explore) ?? { value: Number.NaN, lo: Number.NaN, hi: Number.NaN };
    return {
      id: textField(FN, `${p}.id`, r.id),
      label: textField(FN, `${p}.label`, r.label),
      effect: textField(FN, `${p}.effect`, r.effect),
      nullValue: numberField(FN, `${p}.nullValue`, r.nullValue),
      explore,
      sealed: interval(FN, `${p}.sealed`, r.sealed),
      ebh: r.ebh === undefined || r.ebh === null ? null : Boolean(r.ebh),
      verdict: r.verdict === undefined ? "" : textField(FN, `${p}.verdict`, r.verdict),
    };
  });
  const kinds = [...new Set(data.map((d) => d.effect))];

  const labelWidth = Math.round(Math.min(300, Math.max(120, width * 0.3)));
  const verdictWidth = 112;
  const left = labelWidth + 16;
  const right = width - verdictWidth - 12;
  const legendHeight = 26;
  const children: SceneNode[] = [];

  // Legend: which line is which split, and what the e-BH mark means.
  const legend: [string, string, string][] = [
    ["exploration (chose it)", COLORS.faint, "legend-explore"],
    ["sealed (decided it)", COLORS.accent, "legend-sealed"],
  ];
  let lx = 0;
  for (const [name, color, cls] of legend) {
    children.push(
      { type: "line", class: cls, x1: lx, y1: 10, x2: lx + 18, y2: 10, stroke: color, strokeWidth: 2 },
      { type: "circle", class: cls, cx: lx + 9, cy: 10, r: 3.5, fill: color },
      { type: "text", class: "legend", x: lx + 24, y: 10, text: name, baseline: "middle", fill: COLORS.text },
    );
    lx += 24 + textWidth(name, TYPE.small) * 1.15 + 20; // the page's font runs wider than the width table
  }
  const ebhNote = fitText("e-BH ✓: the sealed e-value survived e-BH at α", Math.max(40, width - lx), TYPE.small);
  children.push({
    type: "text",
    class: "legend",
    x: width,
    y: 10,
    text: ebhNote.text,
    anchor: "end",
    baseline: "middle",
    fill: COLORS.muted,
    ...(ebhNote.cut ? { tip: "e-BH ✓: the sealed e-value survived e-BH at α" } : {}),
  });

  let y = legendHeight;
  for (const kind of kinds) {
    const panel = data.filter((d) => d.effect === kind);
    const [b0, b1] = bounds(kind);
    const nullValue = panel[0]!.nullValue;
    const values = panel
      .flatMap((d) => [d.explore.lo, d.explore.hi, d.explore.value, d.sealed?.lo, d.sealed?.hi, d.sealed?.value])
      .filter((v): v is number => typeof v === "number" && Number.isFinite(v));
    const lo = Math.min(nullValue, ...values);
    const hi = Math.max(nullValue, ...values);
    const pad = Math.max((hi - lo) * 0.08, 0.02);
    const x = scaleLinear([Math.max(b0, lo - pad), Math.min(b1, hi + pad)], [left, right]).nice(6);
    const [n0, n1] = x.domain() as [number, number];
    x.domain([Math.max(b0, n0), Math.min(b1, n1)]).clamp(true);

    const title = fitText(`${kind} · null ${decimal(nullValue)}`, right - left, TYPE.label);
    children.push({
      type: "text",
      class: "panel-title",
      x: left,
      y: y + 12,
      text: title.text,
      ...(title.cut ? { tip: `${kind} · null ${decimal(nullValue)}` } : {}),
      size: TYPE.label,
      weight: "bold",
      fill: COLORS.text,
    });
    const top = y + 22;
    const { rows: placed, bottom } = labelledRows(panel, { label: (d) => d.label, width: labelWidth, top });
    children.push(...rowBands(placed, width));
    const nullRule = ruleX(nullValue, x, top - 4, bottom, {
      stroke: COLORS.muted,
      strokeDasharray: "4 3",
      class: "null-line",
    });
    children.push(axisX(x, bottom, { ticks: 6, gridTo: top - 4, bounds: [left - 20, right + 20] }));
    if (nullRule) children.push(nullRule);
    children.push(...rowLabels(placed));
    for (const p of placed) {
      const describe = (split: string, i: ForestInterval | null | undefined) =>
        `${p.datum.label} · ${split}: ${kind} ${show(i)}, null ${decimal(p.datum.nullValue)}`;
      children.push(
        ...intervalX([p.datum.explore], {
          x,
          y: () => p.mid - 6,
          lo: (i) => i.lo ?? Number.NaN,
          hi: (i) => i.hi ?? Number.NaN,
          mid: (i) => i.value ?? Number.NaN,
          color: () => COLORS.faint,
          class: () => "explore",
          key: () => `${p.datum.id}|explore`,
          tip: (i) => describe("exploration", i),
          r: 3.5,
          cap: 6,
        }),
      );
      if (p.datum.sealed)
        children.push(
          ...intervalX([p.datum.sealed], {
            x,
            y: () => p.mid + 6,
            lo: (i) => i.lo ?? Number.NaN,
            hi: (i) => i.hi ?? Number.NaN,
            mid: (i) => i.value ?? Number.NaN,
            color: () => COLORS.accent,
            class: () => "sealed",
            key: () => `${p.datum.id}|sealed`,
            tip: (i) => describe("sealed", i),
            cap: 6,
          }),
        );
      const verdict = fitText(p.datum.verdict || "not decided", verdictWidth, TYPE.label);
      children.push({
        type: "text",
        class: "verdict",
        x: width - verdictWidth,
        y: p.mid - 7,
        text: verdict.text,
        ...(verdict.cut ? { tip: p.datum.verdict } : {}),
        baseline: "middle",
        size: TYPE.label,
        weight: "bold",
        fill: verdictColor(p.datum.verdict),
      });
      children.push({
        type: "text",
        class: "ebh",
        x: width - verdictWidth,
        y: p.mid + 8,
        text: p.datum.ebh === null ? "e-BH —" : p.datum.ebh ? "e-BH ✓" : "e-BH ✗",
        baseline: "middle",
        fill: p.datum.ebh ? COLORS.pass : COLORS.muted,
        tip:
          p.datum.ebh === null
            ? `${p.datum.id}: not decided on the sealed split`
            : p.datum.ebh
              ? `${p.datum.id}: the sealed e-value survived e-BH`
              : `${p.datum.id}: the sealed e-value did not survive e-BH`,
      });
    }
    y = bottom + 40;
  }

  const height = Math.max(y, legendHeight + 20);
  const counts = new Map<string, number>();
  for (const d of data) counts.set(d.verdict || "not decided", (counts.get(d.verdict || "not decided") ?? 0) + 1);
  const tally = [...counts].map(([v, n]) => `${n} ${v}`).join(", ");
  return {
    width,
    height,
    label:
      data.length === 0
        ? "No hypothesis to draw."
        : `${data.length} hypothes${data.length === 1 ? "is" : "es"} in ${kinds.length} panel${kinds.length === 1 ? "" : "s"} (${kinds.join(", ")}): ${tally}`,
    description:
      "Each row: the exploration interval (grey, where the hypothesis was chosen) above the sealed interval (blue, where it was decided), against the dashed null line of its panel.",
    children,
    table: {
      caption: "Each hypothesis' effect with its 95% interval, exploration and sealed",
      columns: [
        { label: "Hypothesis" },
        { label: "Effect" },
        { label: "Null", align: "right" },
        { label: "Exploration [95%]", align: "right" },
        { label: "Sealed [95%]", align: "right" },
        { label: "e-BH" },
        { label: "Verdict" },
      ],
      rows: data.map((d) => [
        d.label,
        d.effect,
        decimal(d.nullValue),
        show(d.explore),
        show(d.sealed),
        d.ebh === null ? "—" : d.ebh ? "yes" : "no",
        d.verdict || "—",
      ]),
    },
  };
}
