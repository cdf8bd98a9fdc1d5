import { describe, expect, it } from "vitest";
import { caseRow, caseRows, queryRows, verdictCounts } from "./case-rows.ts";
import type { CaseView, TrialView } from "./run-view.ts";

const trial = (repeat: number, passed: boolean, extra: Partial<TrialView> = {}): TrialView => ({
  repeat,
  output: passed ? "yes" : "no",
  passed,
  errored: false,
  checks: { yesNo: { name: "yesNo", version: "1", passed, errored: false } },
  latencyMs: 10 * (repeat + 1),
  ...extra,
});
const view = (id: string, trials: TrialView[], extra: Partial<CaseView> = {}): CaseView => ({
  id,
  hash: "h",
  tags: [],
  trials,
  ...extra,
});

describe("caseRow", () => {
  it("gives each case one verdict over its trials", () => {
    const metrics = ["pass", "yesNo"];
    expect(caseRow(view("a", []), 0, metrics).verdict).toBe("pending");
    expect(caseRow(view("a", [trial(0, true), trial(1, true)]), 0, metrics).verdict).toBe("pass");
    expect(caseRow(view("a", [trial(0, false)]), 0, metrics).verdict).toBe("fail");
    const flaky = caseRow(view("a", [trial(0, true), trial(1, false), trial(2, true)]), 3, metrics);
    expect(flaky).toMatchObject({ verdict: "flaky", trials: 3, passed: 2, position: 3, latencyMs: 20 });
    expect(flaky.metrics["yesNo"]).toBeCloseTo(2 / 3);
    const error = caseRow(view("a", [trial(0, false, { errored: true, error: "boom" })]), 0, metrics);
    expect(error).toMatchObject({ verdict: "error", errored: 1 });
    expect(error.metrics["pass"]).toBeUndefined();
    expect(caseRow(view("a", [trial(0, true, { output: "x".repeat(500) })]), 0, metrics).output).toHaveLength(200);
  });
});

describe("queryRows", () => {
  const rows = caseRows({
    id: "r",
    evalKey: "e",
    status: "finished",
    startedAt: "",
    repeats: 1,
    metrics: ["pass"],
    fingerprint: { datasetVersion: "", caseHashes: {}, evaluators: {}, model: { key: "m" }, generation: {} },
    cases: new Map([
      ["c", view("c", [trial(0, true)], { split: "random", tags: ["color"] })],
      ["a", view("a", [trial(0, false)], { split: "adversarial" })],
      ["b", view("b", [trial(0, true, { errored: true })])],
    ]),
  });

  it("filters by verdict and by text, and sorts stably", () => {
    expect(queryRows(rows).map((r) => r.id)).toEqual(["c", "a", "b"]);
    expect(queryRows(rows, { sort: "id" }).map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect(queryRows(rows, { sort: "verdict" }).map((r) => r.id)).toEqual(["b", "a", "c"]);
    expect(queryRows(rows, { sort: "position", descending: true }).map((r) => r.id)).toEqual(["b", "a", "c"]);
    expect(queryRows(rows, { verdict: "fail" }).map((r) => r.id)).toEqual(["a"]);
    expect(queryRows(rows, { search: "COLOR" }).map((r) => r.id)).toEqual(["c"]);
    expect(queryRows(rows, { search: "advers" }).map((r) => r.id)).toEqual(["a"]);
    expect(verdictCounts(rows)).toEqual({ pass: 1, fail: 1, flaky: 0, error: 1, pending: 0 });
  });
});
