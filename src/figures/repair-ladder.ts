import { scaleLinear } from "d3-scale";
import { count, points, pointsTick, pValue } from "./format.ts";
import { axisX } from "./marks/axis.ts";
import { barX } from "./marks/bar-x.ts";
import { labelledRows, rowBands, rowLabels } from "./marks/labelled-rows.ts";
import { ruleX } from "./marks/rule.ts";
import type { Scene, SceneNode } from "./scene.ts";
import { fitText } from "./text-width.ts";
import { COLORS, TYPE } from "./theme.ts";
import { numberField, rowsOf, textField, widthOption } from "./validate.ts";

/** One repair candidate, paired against the unmodified baseline on the same `n` cases. */
export interface RepairLadderRow {
  /** The rung (L1 prompt … L4 fine-tune). */
  readonly tier: string;
  readonly candidate: string;
  readonly n: number;
  /** Cases the baseline failed that the candidate passes. */
  readonly fixed: number;
  /** Cases the baseline passed that the candidate fails. */
  readonly broken: number;
  readonly validated: boolean;
  /** The one-sided paired test's p-value, when there is one. */
  readonly p?: number | null;
  /** Yes/no tasks: the yes-bias control on the same cases (the model pushed toward the answer the repair favours). */
  readonly control?: { readonly fixed: number; readonly broken: number; readonly beaten?: boolean } | null;
}

export interface RepairLadderOptions {
  readonly width: number;
}

const FN = "repairLadder";

/**
 * The net effect of a repair: (fixed − broken) / n, positive when it helps
 * (more failures fixed than passes broken), negative when it harms.
 *
 * @example netEffect({ n: 210, fixed: 8, broken: 28 }) // -0.0952… (harms: 20 more cases broken than fixed)
 */
export function netEffect(row: { readonly n: number; readonly fixed: number; readonly broken: number }): number {
  return row.n > 0 ? (row.fixed - row.broken) / row.n : Number.NaN;
}

/**
 * A net effect as text, with no sign on zero (a repair that changed nothing neither helps nor harms).
 *
 * @example netText(0) // "0 pts"; netText(-20 / 210) // "−9.5 pts"
 */
export function netText(net: number): string {
  return net === 0 ? "0 pts" : points(net);
}

const verdictOf = (net: number) =>
  !Number.isFinite(net) ? "not measured" : net > 0 ? "helps" : net < 0 ? "harms" : "no change";

/**
 * Did any repair help, and by how much against what it broke? Each
 * candidate's net effect on the failure rate, (fixed − broken) / n, as a bar
 * from zero: harm points left, help points right, with its fixed and broken
 * counts written on the row, the yes-bias control (yes/no tasks) as a tick on
 * the same scale, and whether the candidate was validated.
 *
 * @example repairLadder([{ tier: "L2", candidate: "crop and re-ask", n: 210, fixed: 8, broken: 28, validated: false }], { width: 720 })
 *   // a bar from 0 to −9.5 pts, pointing left (harms), labelled "fixed 8 · broken 28"
 */
export function repairLadder(rows: readonly RepairLadderRow[], options: RepairLadderOptions): Scene {
  const width = widthOption(FN, options?.width, 320);
  const data = rowsOf<RepairLadderRow>(FN, "rows", rows).map((r, i) => {
    const p = `rows[${i}]`;
    const control =
      r.control === undefined || r.control === null
        ? null
        : {
            fixed: numberField(FN, `${p}.control.fixed`, r.control.fixed),
            broken: numberField(FN, `${p}.control.broken`, r.control.broken),
            beaten: r.control.beaten === undefined ? undefined : Boolean(r.control.beaten),
          };
    const row = {
      tier: textField(FN, `${p}.tier`, r.tier),
      candidate: textField(FN, `${p}.candidate`, r.candidate),
      n: numberField(FN, `${p}.n`, r.n),
      fixed: numberField(FN, `${p}.fixed`, r.fixed),
      broken: numberField(FN, `${p}.broken`, r.broken),
      validated: Boolean(r.validated),
      p: r.p === undefined || r.p === null ? Number.NaN : numberField(FN, `${p}.p`, r.p),
      control,
    };
    return {
      ...row,
      net: netEffect(row),
      controlNet: control ? netEffect({ n: row.n, ...control }) : Number.NaN,
    };
  });

  const labelWidth = Math.round(Math.min(280, Math.max(120, width * 0.28)));
  const statusWidth = 92;
  const left = labelWidth + 14;
  const right = width - statusWidth - 10;
  const top = 34;
  const extent = Math.max(
    0.01,
    ...data.flatMap((d) => [Math.abs(d.net), Math.abs(d.controlNet)]).filter((v) => Number.isFinite(v)),
  );
  // Symmetric around zero, with room past the longest bar for its value.
  const x = scaleLinear([-extent * 1.4, extent * 1.4], [left, right]).nice(6);
  const zero = x(0);
  const children: SceneNode[] = [];

  const harm = fitText("← harms: more broken than fixed", zero - left - 6, TYPE.small);
  const help = fitText("helps: more fixed than broken →", right - zero - 6, TYPE.small);
  children.push(
    {
      type: "text",
      class: "direction harm",
      x: zero - 6,
      y: 12,
      text: harm.text,
      anchor: "end",
      baseline: "middle",
      fill: COLORS.fail,
      ...(harm.cut ? { tip: "harms: more broken than fixed" } : {}),
    },
    {
      type: "text",
      class: "direction help",
      x: zero + 6,
      y: 12,
      text: help.text,
      baseline: "middle",
      fill: COLORS.pass,
      ...(help.cut ? { tip: "helps: more fixed than broken" } : {}),
    },
  );

  const { rows: placed, bottom } = labelledRows(data, {
    label: (d) => `${d.tier} ${d.candidate}`,
    width: labelWidth,
    top,
    maxLines: 2,
    padding: 14,
  });
  children.push(...rowBands(placed, width));
  children.push(axisX(x, bottom, { ticks: 6, format: pointsTick, gridTo: top - 4, bounds: [left - 20, right + 20] }));
  const zeroRule = ruleX(0, x, top - 6, bottom, { stroke: COLORS.text, class: "zero-line" });
  if (zeroRule) children.push(zeroRule);

  children.push(...rowLabels(placed));
  for (const p of placed) {
    const d = p.datum;
    const what = verdictOf(d.net);
    const tip =
      `${p.label}: ${what}, net ${netText(d.net)} of ${count(d.n)} cases ` +
      `(fixed ${count(d.fixed)}, broken ${count(d.broken)})` +
      (Number.isFinite(d.p) ? `, one-sided p ${pValue(d.p)}` : "") +
      (d.validated ? "; validated" : "; not validated");
    children.push(
      ...barX([d], {
        x,
        value: (r) => r.net,
        y: () => p.mid - 8,
        height: 16,
        fill: (r) => (r.net > 0 ? COLORS.pass : r.net < 0 ? COLORS.fail : COLORS.neutral),
        class: () => (d.net > 0 ? "help" : d.net < 0 ? "harm" : "none"),
        key: () => `${d.tier}|${d.candidate}`,
        tip: () => tip,
      }),
    );
    if (Number.isFinite(d.net)) {
      // The net value just past the bar's end, on its own side of zero.
      const end = x(d.net);
      const value = d.net === 0 ? "no change" : points(d.net);
      children.push({
        type: "text",
        class: "net",
        x: d.net < 0 ? end - 4 : end + 4,
        y: p.mid,
        text: value,
        anchor: d.net < 0 ? "end" : "start",
        baseline: "middle",
        fill: COLORS.text,
      });
      // The counts on the other side of zero, where the bar leaves room.
      const counts = `fixed ${count(d.fixed)} · broken ${count(d.broken)}`;
      // Clear of the yes-bias control's tick when it sits on this side of zero.
      const tick = x(d.controlNet);
      const side = d.net < 0 ? 1 : -1;
      const start =
        Number.isFinite(tick) &&
        side * (tick - zero) > 0 &&
        side * (tick - zero) < 0.6 * (side > 0 ? right - zero : zero - left)
          ? tick + side * 6
          : zero + side * 6;
      const room = side > 0 ? right - start - 2 : start - left - 2;
      const fitted = fitText(counts, Math.max(20, room), TYPE.small);
      children.push({
        type: "text",
        class: "counts",
        x: start,
        y: p.mid,
        text: fitted.text,
        anchor: d.net < 0 ? "start" : "end",
        baseline: "middle",
        fill: COLORS.muted,
        ...(fitted.cut ? { tip: counts } : {}),
      });
    }
    const cx = x(d.controlNet);
    if (Number.isFinite(cx))
      children.push({
        type: "line",
        class: "control",
        x1: cx,
        y1: p.mid - 12,
        x2: cx,
        y2: p.mid + 12,
        stroke: COLORS.text,
        strokeWidth: 2,
        strokeDasharray: "3 2",
        tip:
          `${p.label}: yes-bias control ${netText(d.controlNet)} (fixed ${count(d.control!.fixed)}, broken ${count(d.control!.broken)})` +
          (d.control!.beaten === undefined ? "" : d.control!.beaten ? "; the candidate beat it" : "; not beaten"),
      });
    children.push({
      type: "text",
      class: d.validated ? "status validated" : "status",
      x: width - statusWidth,
      y: p.mid,
      text: d.validated ? "validated ✓" : "not validated",
      baseline: "middle",
      weight: d.validated ? "bold" : "normal",
      fill: d.validated ? COLORS.pass : COLORS.muted,
    });
  }
  const axisTitle = fitText("net change, (fixed − broken) / n, in points", right - left, TYPE.title);
  children.push({
    type: "text",
    class: "axis-label",
    x: (left + right) / 2,
    y: bottom + 24,
    text: axisTitle.text,
    anchor: "middle",
    baseline: "hanging",
    size: TYPE.title,
    fill: COLORS.muted,
  });
  const hasControl = data.some((d) => Number.isFinite(d.controlNet));
  if (hasControl) {
    const note = fitText("┆ yes-bias control on the same cases", width - left, TYPE.small);
    children.push({
      type: "text",
      class: "legend",
      x: left,
      y: bottom + 42,
      text: note.text,
      baseline: "hanging",
      fill: COLORS.muted,
    });
  }
  const height = bottom + (hasControl ? 58 : 44);
  const helped = data.filter((d) => d.net > 0).length;
  const harmed = data.filter((d) => d.net < 0).length;
  return {
    width,
    height,
    label:
      data.length === 0
        ? "No repair candidate to draw."
        : `${data.length} repair candidate${data.length === 1 ? "" : "s"}: ${helped} help${helped === 1 ? "s" : ""}, ${harmed} harm${harmed === 1 ? "s" : ""}, ${data.filter((d) => d.validated).length} validated`,
    description: "Each bar is (fixed − broken) / n: to the right of zero the repair fixed more cases than it broke.",
    children,
    table: {
      caption: "Each repair candidate against the baseline: fixed, broken and the net change",
      columns: [
        { label: "Tier" },
        { label: "Candidate" },
        { label: "n", align: "right" },
        { label: "Fixed", align: "right" },
        { label: "Broken", align: "right" },
        { label: "Net (fixed − broken) / n", align: "right" },
        { label: "Direction" },
        { label: "Yes-bias control", align: "right" },
        { label: "Validated" },
      ],
      rows: data.map((d) => [
        d.tier,
        d.candidate,
        count(d.n),
        count(d.fixed),
        count(d.broken),
        netText(d.net),
        verdictOf(d.net),
        netText(d.controlNet),
        d.validated ? "yes" : "no",
      ]),
    },
  };
}
