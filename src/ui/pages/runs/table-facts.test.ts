import { describe, expect, it } from "vitest";
import type { CaseTablePage } from "../../../../workers/run-tables.ts";
import { sameFacts } from "./table-facts.ts";

const page = (change: Partial<CaseTablePage> = {}): CaseTablePage => ({
  total: 100,
  matched: 40,
  counts: { pass: 30, fail: 10, flaky: 0, error: 0, pending: 60 },
  metrics: ["pass", "yesNo"],
  offset: 0,
  rows: [],
  judged: 40,
  summary: undefined,
  ...change,
});

describe("sameFacts", () => {
  it("holds for two pages of the same table, whatever their rows and offsets", () => {
    expect(sameFacts(page(), page({ offset: 200 }))).toBe(true);
  });

  it("fails when there is no table yet, or when any fact shown above the rows moved", () => {
    expect(sameFacts(undefined, page())).toBe(false);
    expect(sameFacts(page(), page({ judged: 41 }))).toBe(false);
    expect(sameFacts(page(), page({ matched: 39 }))).toBe(false);
    expect(sameFacts(page(), page({ total: 101 }))).toBe(false);
    expect(sameFacts(page({ partial: true }), page())).toBe(false);
    expect(sameFacts(page(), page({ metrics: ["pass"] }))).toBe(false);
    expect(sameFacts(page(), page({ counts: { pass: 29, fail: 11, flaky: 0, error: 0, pending: 60 } }))).toBe(false);
  });
});
