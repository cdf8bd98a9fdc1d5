import { expect, it } from "vitest";
import { runHead } from "./heads.ts";
import type { RunRecord } from "./types.ts";

it("a run's head drops what grows with its cases and keeps the rest", () => {
  const fingerprint = { datasetVersion: "v1", caseHashes: { a: "1", b: "2" }, evaluators: {}, model: { key: "m" } };
  const run: RunRecord = {
    id: "r",
    kind: "eval",
    dataset: "d",
    model: "m",
    fingerprint: "abc",
    status: "finished",
    startedAt: "2026-12-01T00:00:00Z",
    config: { eval: "e", repeats: 1, cases: [{ id: "a" }, { id: "b" }], fingerprint },
    summary: { pass: { mean: 0.5 }, fingerprint },
  };
  const head = runHead(run);
  expect(head.caseCount).toBe(2);
  expect(head.config).toEqual({
    eval: "e",
    repeats: 1,
    fingerprint: { datasetVersion: "v1", evaluators: {}, model: { key: "m" } },
  });
  expect(head.summary).toEqual({
    pass: { mean: 0.5 },
    fingerprint: { datasetVersion: "v1", evaluators: {}, model: { key: "m" } },
  });
  expect(runHead({ ...run, config: {}, summary: undefined } as RunRecord)).not.toHaveProperty("caseCount");
});
