import { describe, expect, it } from "vitest";
import { pairedTable, syntheticRun } from "../../../evals/index.ts";
import type { RunHead } from "../../../store/heads.ts";
import { compareJob } from "../../../../workers/stats-jobs.ts";
import {
  comparableRuns,
  defaultPair,
  estimateRows,
  gateRows,
  kindCounts,
  metricTable,
  parseTolerance,
  runLabel,
  verdictBanner,
  visibleCases,
} from "./compare-view.ts";

const head = (id: string, evalKey: string, startedAt: string, extra: Partial<RunHead> = {}): RunHead => ({
  id,
  kind: "eval",
  dataset: "pope",
  model: "tiny-vlm",
  fingerprint: "fp",
  status: "finished",
  startedAt,
  config: { eval: evalKey, repeats: 1 },
  caseCount: 50,
  ...extra,
});

describe("the runs Compare can pick", () => {
  const heads = [
    head("a", "pope", "2026-01-01T00:00:00Z"),
    head("other", "chair", "2026-01-03T00:00:00Z"),
    head("b", "pope", "2026-01-02T00:00:00Z"),
    head("inv", "pope", "2026-01-04T00:00:00Z", { kind: "investigation" }),
    head("odd", "x", "2026-01-05T00:00:00Z", { config: {} }),
  ];

  it("lists eval runs only, newest first, with their eval", () => {
    expect(comparableRuns(heads).map((r) => [r.id, r.evalKey])).toEqual([
      ["other", "chair"],
      ["b", "pope"],
      ["a", "pope"],
    ]);
    expect(runLabel(comparableRuns(heads)[1]!)).toBe("b — tiny-vlm, eval pope, 50 cases");
  });

  it("opens with the newest run that has an earlier run of the same eval, as the gate's 'latest' baseline", () => {
    expect(defaultPair(comparableRuns(heads))).toEqual({ baseline: "a", candidate: "b" });
    expect(defaultPair(comparableRuns([heads[0]!, heads[1]!]))).toBeUndefined();
  });
});

describe("parseTolerance", () => {
  it("reads points and says what it expected", () => {
    expect(parseTolerance("3")).toEqual({ ok: true, value: 0.03 });
    expect(parseTolerance(" 2.5 pts")).toEqual({ ok: true, value: 0.025 });
    expect(parseTolerance("0.7")).toEqual({ ok: true, value: 0.007 });
    expect(parseTolerance("three")).toEqual({
      ok: false,
      message: "'three' is not a number of points; e.g. 3 for a three-point drop",
    });
    expect(parseTolerance("0")).toEqual({
      ok: false,
      message: "a tolerance of 0 points is not between 0 and 100; e.g. 3",
    });
  });
});

describe("the page's tables from the worker's result", () => {
  const t = pairedTable({ both: 40, regressed: 12, fixed: 1, neither: 7 });
  const result = compareJob(syntheticRun({ id: "base", cases: t.a }), syntheticRun({ id: "cand", cases: t.b }), {
    tolerance: 0.03,
  });

  it("formats each metric's test, p and e-value", () => {
    const [row] = metricTable(result);
    expect(row).toMatchObject({
      metric: "pass",
      gated: true,
      difference: "−18.3 pts",
      test: "McNemar + Newcombe",
      pNote: "Holm",
      verdict: "fail",
      counts: "12 regressed, 1 fixed of 60",
    });
    expect(row!.eValue).not.toBe("—");
    expect(row!.line).toContain("pass: −18.3 pts");
  });

  it("says the verdict in words", () => {
    expect(verdictBanner(result)).toEqual({
      tone: "fail",
      word: "FAIL",
      detail: "the candidate dropped by more than 3.0 pts on pass",
    });
    expect(verdictBanner({ ...result, gate: undefined, refused: "runs of two evals" })).toEqual({
      tone: "neutral",
      word: "NOT GATED",
      detail: "runs of two evals",
    });
  });

  it("feeds the figures and the case table", () => {
    expect(gateRows(result)[0]).toMatchObject({ metric: "pass", gated: true, tolerance: 0.03, verdict: "fail" });
    expect(estimateRows(result).map((r) => r.series)).toEqual(["baseline base", "candidate cand"]);
    expect(kindCounts(result.cases)).toMatchObject({ regressed: 12, fixed: 1, "both-pass": 40, "both-fail": 7 });
    expect(visibleCases(result.cases, true)).toHaveLength(13);
    expect(visibleCases(result.cases, false)).toHaveLength(60);
  });
});
