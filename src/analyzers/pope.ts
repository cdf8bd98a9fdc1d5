/**
 * POPE metrics per split (random / popular / adversarial): accuracy,
 * precision, recall and F1 of "yes", the yes-ratio, and the share of answers
 * that are neither yes nor no. Answers are read by the same `extractYesNo` as the `yesNo` evaluator, and an
 * unreadable answer is wrong on either side (as the evaluator judges it), so this analyzer's accuracy agrees with
 * the labels the loop uses. Run-level only: no per-case signal.
 */
import { extractYesNo } from "../core/yes-no.ts";
import type { Analyzer, ProbeItem } from "./types.ts";

export interface PopeRow {
  readonly split: string;
  readonly n: number;
  readonly accuracy: number;
  readonly precision: number;
  readonly recall: number;
  readonly f1: number;
  readonly yesRatio: number;
  readonly unknownShare: number;
}

/**
 * POPE metrics of the items whose expected answer is yes or no.
 * Example: `popeMetrics(items)` → `[{ split: "all", n: 600, accuracy: 0.81, … }, { split: "adversarial", … }]`.
 */
export function popeMetrics(items: readonly ProbeItem[]): PopeRow[] {
  const yn = items.filter((i) => ["yes", "no"].includes(String(i.case.expected).trim().toLowerCase()));
  const splits = ["all", ...new Set(yn.map((i) => i.case.split ?? "all"))].filter((s, k, a) => a.indexOf(s) === k);
  return splits.map((split) => {
    const rows = split === "all" ? yn : yn.filter((i) => (i.case.split ?? "all") === split);
    let tp = 0,
      fp = 0,
      fn = 0,
      tn = 0,
      unknown = 0,
      yes = 0;
    for (const i of rows) {
      const said = extractYesNo(i.output).answer;
      const want = String(i.case.expected).trim().toLowerCase();
      if (said === "unknown") unknown++;
      if (said === "yes") yes++;
      if (want === "yes") {
        if (said === "yes") tp++;
        else fn++;
      } else if (said === "yes") fp++;
      else if (said === "no") tn++;
    }
    const n = rows.length;
    const precision = tp + fp ? tp / (tp + fp) : NaN;
    const recall = tp + fn ? tp / (tp + fn) : NaN;
    return {
      split,
      n,
      accuracy: n ? (tp + tn) / n : NaN,
      precision,
      recall,
      f1: precision + recall ? (2 * precision * recall) / (precision + recall) : NaN,
      yesRatio: n ? yes / n : NaN,
      unknownShare: n ? unknown / n : NaN,
    };
  });
}

function f3(x: number): string {
  return Number.isFinite(x) ? x.toFixed(3) : "undefined (no yes answer)";
}

/** The POPE analyzer: `popeMetrics` per split as run-level findings (no per-case signal). */
export const pope: Analyzer = {
  name: "pope",
  description: "POPE per split: accuracy, precision, recall, F1, yes-ratio, unknown share",
  tags: ["prior", "content"],
  requires: ["generate"],
  reductions: [],
  parameters: { positive: "yes" },
  run(items) {
    const rows = popeMetrics(items);
    const all = rows.find((r) => r.split === "all");
    return {
      summary: all
        ? `pope: accuracy ${f3(all.accuracy)}, F1 ${f3(all.f1)}, yes-ratio ${f3(all.yesRatio)}, unknown ${f3(all.unknownShare)} over ${all.n} yes/no cases; accuracy by split: ` +
          rows
            .filter((r) => r.split !== "all")
            .map((r) => `${r.split} ${f3(r.accuracy)}`)
            .join(", ")
        : "pope: no yes/no cases",
      findings: { signals: [], splits: rows },
      artifacts: { perCase: {} },
    };
  },
};
