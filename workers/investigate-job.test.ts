import { describe, expect, it } from "vitest";
import type { EventRecord } from "../src/store/types.ts";
import {
  attempts,
  checkPlan,
  latestAttempt,
  plainCase,
  progressOf,
  recordedOptions,
  resumeDifferences,
  writerLockId,
} from "./investigate-job.ts";

const record = (seq: number, type: string, payload: Record<string, unknown> = {}, stage = "setup"): EventRecord => ({
  runId: "inv",
  seq,
  ts: `2026-12-01T10:00:${String(seq).padStart(2, "0")}.000Z`,
  stage,
  schema: 1,
  type,
  payload,
});

const started = {
  question: "What predicts the hallucinations?",
  seed: 1,
  holdout: 0.4,
  maxTier: "L3b",
  model: { key: "tiny-vlm" },
};
const loaded = { fingerprint: "de23deb6d374", n: 200 };

describe("attempts of a stored log", () => {
  const log = [
    record(0, "run.started", started),
    record(1, "data.loaded", loaded),
    record(2, "stage.started", { stage: "M1" }, "M1"),
    // A reload: the resumed attempt repeats what it keeps, then says so.
    record(3, "run.started", started),
    record(4, "data.loaded", loaded),
    record(5, "run.resumed", { discarded: 1 }),
    record(6, "stage.started", { stage: "M1" }, "M1"),
  ];

  it("splits the log at each run.started and numbers each attempt from 0, as the CLI's events.jsonl", () => {
    const all = attempts(log);
    expect(all.map((a) => a.map((e) => e.type))).toEqual([
      ["run.started", "data.loaded", "stage.started"],
      ["run.started", "data.loaded", "run.resumed", "stage.started"],
    ]);
    const last = latestAttempt(log);
    expect(last.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(last[3]).toEqual({
      runId: "inv",
      seq: 3,
      ts: "2026-12-01T10:00:06.000Z",
      stage: "M1",
      schema: 1,
      type: "stage.started",
      payload: { stage: "M1" },
    });
    expect(latestAttempt([])).toEqual([]);
  });

  it("reads back what the attempt was started with, and names each difference a resume would not accept", () => {
    const before = recordedOptions(latestAttempt(log))!;
    expect(before).toEqual({ ...started, model: "tiny-vlm", ...loaded });
    expect(resumeDifferences(before, before)).toEqual([]);
    expect(
      resumeDifferences(before, { ...before, model: "tiny-lm", seed: 2, fingerprint: "aaaaaaaaaaaa", n: 150 }),
    ).toEqual([
      "the model is 'tiny-lm' where the run used 'tiny-vlm'",
      "the dataset's selection now gives 150 case(s) (fingerprint aaaaaaaaaaaa) where the run had 200 (fingerprint de23deb6d374)",
      "the seed is 2 where the run used 1",
    ]);
    expect(recordedOptions([])).toBeUndefined();
  });
});

describe("checkPlan", () => {
  const plan = { dataset: "pope", question: "What predicts the hallucinations?", maxTier: "L1", holdout: 0.4, seed: 1 };

  it("keeps a valid plan and names the first wrong field", () => {
    expect(checkPlan({ ...plan, select: { sample: 200 } })).toEqual({ ...plan, select: { sample: 200 } });
    expect(checkPlan({ ...plan, maxTier: "none" }).maxTier).toBe("none");
    expect(() => checkPlan({ ...plan, maxTier: "L9" })).toThrow(
      'plan.maxTier: expected one of L1, L2, L3a, L3b, L4 or none, got "L9"',
    );
    expect(() => checkPlan({ ...plan, holdout: 1 })).toThrow("plan.holdout: expected a share strictly between 0 and 1");
    expect(() => checkPlan({ ...plan, seed: 1.5 })).toThrow("plan.seed: expected a whole number ≥ 0, got 1.5");
    expect(() => checkPlan({ ...plan, question: " " })).toThrow("plan.question: expected the question to answer");
    expect(() => checkPlan(undefined)).toThrow("plan.dataset: expected a stored dataset's id");
  });

  it("passes max turns on only for the agentic loop, a whole number ≥ 1", () => {
    expect(checkPlan({ ...plan, agentic: true, maxTurns: 8 }).maxTurns).toBe(8);
    expect(() => checkPlan({ ...plan, maxTurns: 8 })).toThrow("plan.maxTurns: expected a whole number of turns ≥ 1");
    expect(() => checkPlan({ ...plan, agentic: true, maxTurns: 0 })).toThrow("got 0");
  });

  it("passes the judge's paraphrases on only with the agentic loop's endpoint judge", () => {
    const judge = { kind: "endpoint", url: "http://127.0.0.1:11434/v1", model: "qwen" };
    const asked = { ...plan, agentic: true, judge, searchProbes: { budget: 40, judgeParaphrases: true } };
    expect(checkPlan(asked).searchProbes).toEqual({ budget: 40, judgeParaphrases: true });
    expect(() => checkPlan({ ...asked, judge: { kind: "rules" } })).toThrow(
      "plan.searchProbes.judgeParaphrases: the judge's rewordings need the agentic loop with an endpoint judge",
    );
    expect(() => checkPlan({ ...asked, searchProbes: { budget: 40, judgeParaphrases: "yes" } })).toThrow(
      'plan.searchProbes.judgeParaphrases: expected true or false, got "yes"',
    );
  });
});

it("names the store runs of an investigation by stage, and its writer lock apart from the loop's own", () => {
  expect(progressOf("inv", "inv-m1-label")).toMatchObject({ stage: "M1", what: expect.stringMatching(/^labelling/) });
  expect(progressOf("inv", "inv-m1-probe")).toMatchObject({ stage: "M1", what: expect.stringMatching(/^probing/) });
  expect(progressOf("inv", "inv-m5-rewrite_context")).toEqual({
    stage: "M5",
    what: "repair candidate rewrite_context",
  });
  expect(progressOf("inv", "other-m1-label")).toBeUndefined();
  expect(writerLockId("inv")).toBe("inv#writer");
});

it("a stored case loses the store's bookkeeping, as the CLI's file reads it", () => {
  const stored = {
    id: "a",
    input: { prompt: "q", image: "sha256:00" },
    expected: "yes",
    tags: [],
    status: "active" as const,
    meta: {},
    datasetId: "pope",
    hash: "0123456789ab",
    label: true,
  };
  expect(plainCase(stored)).toEqual({
    id: "a",
    input: { prompt: "q", image: "sha256:00" },
    expected: "yes",
    tags: [],
    status: "active",
    meta: {},
  });
});
