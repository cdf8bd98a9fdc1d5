/**
 * What the Compare page shows, as pure functions (tested in Node): which
 * stored runs can be compared, which pair to open with, the tolerance typed
 * in points, and the rows, cells and counts of the page's tables, read from
 * the stats worker's `CompareJobResult`.
 */
import type { GateIntervalRow } from "../../../figures/gate-intervals.ts";
import type { MetricIntervalRow } from "../../../figures/metric-intervals.ts";
import { decimal, eValue, pointSize, points, pValue } from "../../../figures/format.ts";
import type { RunHead } from "../../../store/heads.ts";
import { CASE_KINDS, type CaseColumns, type CaseKind, type CompareJobResult } from "../../../../workers/stats-jobs.ts";

/** A stored eval run as the pickers list it. */
export interface ComparableRun {
  readonly id: string;
  readonly evalKey: string;
  readonly model: string;
  readonly dataset: string;
  readonly status: string;
  readonly startedAt: string;
  readonly cases?: number;
  readonly repeats?: number;
}

/**
 * The stored runs that can be compared: eval runs (an investigation is not
 * one), newest first, with the eval they are runs of.
 *
 * @example comparableRuns(store.runs).map((r) => r.id) // ["pope-b", "pope-a"]
 */
export function comparableRuns(heads: readonly RunHead[]): ComparableRun[] {
  const out: ComparableRun[] = [];
  for (const h of heads) {
    const config = h.config as { eval?: unknown; repeats?: unknown };
    if (h.kind !== "eval" || typeof config.eval !== "string") continue;
    out.push({
      id: h.id,
      evalKey: config.eval,
      model: h.model,
      dataset: h.dataset,
      status: h.status,
      startedAt: h.startedAt,
      ...(h.caseCount !== undefined ? { cases: h.caseCount } : {}),
      ...(typeof config.repeats === "number" ? { repeats: config.repeats } : {}),
    });
  }
  return out.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
}

/**
 * The pair to open the page with when the URL names none: the newest run as
 * the candidate and the newest earlier run of the same eval as its baseline
 * (what the gate's `latest` baseline picks); undefined without such a pair.
 *
 * @example defaultPair(runs) // { baseline: "pope-a", candidate: "pope-b" }
 */
export function defaultPair(runs: readonly ComparableRun[]): { baseline: string; candidate: string } | undefined {
  for (const candidate of runs) {
    const baseline = runs.find(
      (r) => r.id !== candidate.id && r.evalKey === candidate.evalKey && r.startedAt <= candidate.startedAt,
    );
    if (baseline) return { baseline: baseline.id, candidate: candidate.id };
  }
  return undefined;
}

/** A run's name in a picker: id, model, eval, cases. */
export function runLabel(r: ComparableRun): string {
  const parts = [
    r.model,
    r.evalKey !== r.id ? `eval ${r.evalKey}` : "",
    r.cases !== undefined ? `${r.cases} cases` : "",
  ];
  return `${r.id} — ${parts.filter(Boolean).join(", ")}${r.status !== "finished" ? ` (${r.status})` : ""}`;
}

/**
 * A tolerance typed in points ("3", "2.5 pts") as a share, or why it is not one.
 *
 * @example parseTolerance("2.5") // { ok: true, value: 0.025 }
 */
export function parseTolerance(text: string): { ok: true; value: number } | { ok: false; message: string } {
  const cleaned = text.trim().replace(/\s*(pts?|points?)$/i, "");
  const n = Number(cleaned);
  if (cleaned === "" || !Number.isFinite(n))
    return { ok: false, message: `'${text}' is not a number of points; e.g. 3 for a three-point drop` };
  if (!(n > 0 && n < 100)) return { ok: false, message: `a tolerance of ${n} points is not between 0 and 100; e.g. 3` };
  return { ok: true, value: Math.round(n * 1e4) / 1e6 };
}

/** The words of a case kind in the case table. */
export const KIND_LABELS: Readonly<Record<CaseKind, string>> = {
  regressed: "regressed",
  dropped: "dropped",
  fixed: "fixed",
  gained: "gained",
  "answer-differs": "answer changed",
  "both-fail": "both fail",
  "both-pass": "both pass",
  "both-flaky": "both flaky",
  "no-verdict": "no verdict",
  "changed-case": "case changed",
  "only-baseline": "baseline only",
  "only-candidate": "candidate only",
};

/** A case kind's badge tone: regressions in the fail colour, fixes in the pass colour (always with the word). */
export function kindTone(kind: CaseKind): "pass" | "fail" | "warn" | "neutral" {
  if (kind === "regressed" || kind === "dropped") return "fail";
  if (kind === "fixed" || kind === "gained") return "pass";
  if (kind === "answer-differs" || kind === "changed-case" || kind === "no-verdict") return "warn";
  return "neutral";
}

/**
 * How many cases of each kind: the case table's filter counts.
 *
 * @example kindCounts(result.cases).regressed // 12
 */
export function kindCounts(cases: CaseColumns): Record<CaseKind, number> {
  const counts = Object.fromEntries(CASE_KINDS.map((k) => [k, 0])) as Record<CaseKind, number>;
  for (const k of cases.kind) counts[CASE_KINDS[k]!]++;
  return counts;
}

/**
 * The rows the case table shows: every case, or (diff only) those whose
 * verdicts or answers differ, as indices into the columns.
 *
 * @example visibleCases(result.cases, true).length // 19
 */
export function visibleCases(cases: CaseColumns, diffOnly: boolean): Int32Array {
  if (!diffOnly) {
    const all = new Int32Array(cases.ids.length);
    for (let i = 0; i < all.length; i++) all[i] = i;
    return all;
  }
  const out: number[] = [];
  for (let i = 0; i < cases.differs.length; i++) if (cases.differs[i]) out.push(i);
  return Int32Array.from(out);
}

const METHOD_WORDS: Readonly<Record<string, string>> = {
  "mcnemar-newcombe": "McNemar + Newcombe",
  "adjusted-t": "paired t (Agresti–Min)",
  "cluster-t": "cluster-robust t (CR2)",
  bootstrap: "paired bootstrap",
  "cluster-bootstrap": "cluster bootstrap",
};

/** A comparison method in words (the library's name when it is one the page does not know yet). */
export function methodWords(method: string): string {
  return METHOD_WORDS[method] ?? method.replace(/-/g, " ");
}

/** One row of the per-metric table, formatted. */
export interface MetricTableRow {
  readonly metric: string;
  readonly gated: boolean;
  readonly difference: string;
  readonly interval: string;
  readonly confidence: string;
  readonly test: string;
  readonly p: string;
  readonly pNote: string;
  readonly eValue: string;
  readonly verdict: "pass" | "fail" | "inconclusive" | undefined;
  readonly counts: string;
  /** The CLI's line for this test (`describeTest`), for its tooltip. */
  readonly line: string;
}

/**
 * The per-metric table: difference, interval (and its confidence), the test,
 * p (Holm-adjusted for gated metrics, BH for the others), the e-value where
 * McNemar's applies, the verdict.
 *
 * @example metricTable(result)[0] // { metric: "pass", difference: "−20.0 pts", p: "0.002", pNote: "Holm", eValue: "81.3", verdict: "fail", … }
 */
export function metricTable(result: CompareJobResult): MetricTableRow[] {
  return result.metrics.map((t) => ({
    metric: t.metric,
    gated: t.gated,
    difference: points(t.diff),
    interval: `[${points(t.lo)}, ${points(t.hi)}]`,
    confidence: `${+(t.confidence * 100).toFixed(2)}%`,
    test: methodWords(t.method),
    p: pValue(t.pAdjusted),
    pNote: t.adjustment === "holm" ? "Holm" : "BH",
    eValue: t.eValue !== undefined ? eValue(t.eValue) : "—",
    verdict: t.verdict,
    counts:
      t.regressed !== undefined && t.fixed !== undefined
        ? `${t.regressed} regressed, ${t.fixed} fixed of ${t.n}`
        : `n = ${t.n}`,
    line: t.line,
  }));
}

/** The gate figure's rows, from the worker's result. */
export function gateRows(result: CompareJobResult): GateIntervalRow[] {
  return result.metrics.map((t) => ({
    metric: t.metric,
    diff: t.diff,
    lo: t.lo,
    hi: t.hi,
    gated: t.gated,
    ...(t.tolerance !== undefined ? { tolerance: t.tolerance } : {}),
    ...(t.verdict !== undefined ? { verdict: t.verdict } : {}),
    confidence: t.confidence,
    p: t.pAdjusted,
    test: methodWords(t.method),
  }));
}

/** The side-by-side figure's rows: each run's estimate per metric. */
export function estimateRows(result: CompareJobResult): MetricIntervalRow[] {
  return result.estimates.map((e) => ({
    metric: e.summary.name,
    series: e.run === "baseline" ? `baseline ${result.baseline.id}` : `candidate ${result.candidate.id}`,
    mean: e.summary.mean,
    lo: e.summary.lo,
    hi: e.summary.hi,
    n: e.summary.n,
    method: e.summary.method,
  }));
}

/**
 * The verdict as the page's banner says it, with the badge tone.
 *
 * @example verdictBanner(result) // { tone: "fail", word: "FAIL", detail: "the candidate dropped by more than 3.0 pts on pass" }
 */
export function verdictBanner(result: CompareJobResult): {
  tone: "pass" | "fail" | "warn" | "neutral";
  word: string;
  detail: string;
} {
  const gate = result.gate;
  if (!gate)
    return { tone: "neutral", word: "NOT GATED", detail: result.refused ?? "the gate did not judge these runs" };
  const tol = pointSize(result.tolerance);
  const failed = result.metrics.filter((m) => m.gated && m.verdict === "fail").map((m) => m.metric);
  switch (gate.verdict) {
    case "pass":
      return { tone: "pass", word: "PASS", detail: `no gated metric dropped by ${tol} or more` };
    case "fail":
      return {
        tone: "fail",
        word: "FAIL",
        detail: failed.length
          ? `the candidate dropped by more than ${tol} on ${failed.join(", ")}`
          : "a check of the gate failed (see the reasons)",
      };
    case "inconclusive":
      return {
        tone: "warn",
        word: "INCONCLUSIVE",
        detail: `an interval straddles −${tol}: more cases or repeats would decide it (see Power)`,
      };
    case "error":
      return { tone: "fail", word: "ERROR", detail: "the candidate run cannot be judged (see the reasons)" };
  }
}

/** A share of a run's trials for the case table ("2/3 passed" reads as 67%). */
export function shareText(x: number): string {
  return Number.isFinite(x) ? `${decimal(x * 100)}%` : "—";
}
