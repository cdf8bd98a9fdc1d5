import { describe, expect, it } from "vitest";
import { cliCommand, DEFAULT_INVESTIGATE_FIELDS, investigationPlan } from "./investigate-form.ts";

const fields = { ...DEFAULT_INVESTIGATE_FIELDS, dataset: "pope" };

describe("investigationPlan", () => {
  it("makes the plan the worker runs, with the selection only when one is given", () => {
    expect(investigationPlan(fields)).toEqual({
      dataset: "pope",
      question: "What predicts the hallucinations?",
      maxTier: "L3b",
      holdout: 0.4,
      seed: 1,
    });
    expect(
      investigationPlan({ ...fields, sample: " 200 ", split: "adversarial", tags: "pope, color,", maxTier: "none" }),
    ).toEqual({
      dataset: "pope",
      select: { split: "adversarial", tags: ["pope", "color"], sample: 200 },
      question: "What predicts the hallucinations?",
      maxTier: "none",
      holdout: 0.4,
      seed: 1,
    });
  });

  it("names the wrong field and what it expected", () => {
    expect(() => investigationPlan({ ...fields, dataset: "" })).toThrow("dataset: choose a stored dataset");
    expect(() => investigationPlan({ ...fields, holdout: "1.2" })).toThrow(
      "holdout: a share strictly between 0 and 1 (e.g. 0.4 seals 40% of the cases), got '1.2'",
    );
    expect(() => investigationPlan({ ...fields, seed: "-1" })).toThrow("seed: a whole number ≥ 0 (e.g. 1), got '-1'");
    expect(() => investigationPlan({ ...fields, sample: "ten" })).toThrow("sample: a whole number of cases ≥ 1");
    expect(() => investigationPlan({ ...fields, question: "" })).toThrow("question: say what to find out");
    expect(() => investigationPlan({ ...fields, maxTier: "L7" as never })).toThrow("ceiling: choose one of none, L1");
  });
});

it("writes the CLI's command line for the same plan", () => {
  expect(cliCommand(investigationPlan({ ...fields, sample: "200" }), "tiny-vlm", "pope.jsonl")).toBe(
    "evalrx investigate --model tiny-vlm --data pope.jsonl --sample 200 --seed 1 --holdout 0.4 --max-tier L3b -q 'What predicts the hallucinations?'",
  );
  expect(cliCommand(investigationPlan({ ...fields, split: "random" }), "tiny-vlm", "pope.jsonl")).toMatch(
    /# the CLI has no split filter/,
  );
});

it("reads number inputs as Svelte binds them (numbers, or an empty string)", () => {
  expect(investigationPlan({ ...fields, sample: 60, holdout: 0.3, seed: 7 })).toMatchObject({
    select: { sample: 60 },
    holdout: 0.3,
    seed: 7,
  });
  expect(investigationPlan({ ...fields, sample: "" }).select).toBeUndefined();
});

describe("the agentic loop's turns", () => {
  it("carries a max-turns other than 20 to the plan and the CLI line, and names a bad one", () => {
    const agentic = { ...fields, agentic: true };
    expect(investigationPlan(agentic).maxTurns).toBeUndefined();
    const plan = investigationPlan({ ...agentic, maxTurns: "8" });
    expect(plan.maxTurns).toBe(8);
    expect(cliCommand(plan, "tiny-vlm", "pope.jsonl")).toContain("--agentic --max-turns 8");
    expect(() => investigationPlan({ ...agentic, maxTurns: "0" })).toThrow(
      "max turns: a whole number of judge turns from 1 to 200 (default 20), got '0'",
    );
    expect(investigationPlan({ ...fields, maxTurns: "0" }).maxTurns).toBeUndefined();
  });
});

describe("the probe search option", () => {
  it("adds searchProbes with its budget to the plan and --search-probes to the CLI line; a bad budget is named", () => {
    const plan = investigationPlan({ ...fields, searchProbes: true, probeBudget: 200 });
    expect(plan.searchProbes).toEqual({ budget: 200 });
    expect(cliCommand(plan, "tiny-vlm", "pope.jsonl")).toContain("--search-probes --probe-budget 200");
    expect(investigationPlan({ ...fields, probeBudget: 200 }).searchProbes).toBeUndefined();
    expect(() => investigationPlan({ ...fields, searchProbes: true, probeBudget: "5" })).toThrow(
      "probe budget: a whole number of model calls, at least 10 (e.g. 400), got '5'",
    );
  });

  it("asks the endpoint judge for paraphrases only where one judges: --judge-paraphrases in the CLI line", () => {
    const endpoint = { ...fields, agentic: true, judge: "endpoint" as const, judgeModel: "qwen2.5:7b" };
    const plan = investigationPlan({ ...endpoint, searchProbes: true, probeBudget: 200, judgeParaphrases: true });
    expect(plan.searchProbes).toEqual({ budget: 200, judgeParaphrases: true });
    expect(cliCommand(plan, "tiny-vlm", "pope.jsonl")).toContain(
      "--agentic --judge http://127.0.0.1:11434/v1 --judge-model qwen2.5:7b --search-probes --probe-budget 200 --judge-paraphrases",
    );
    // The tick is shown only with an endpoint judge; left ticked under the rule policy it asks for nothing.
    const rules = investigationPlan({ ...endpoint, judge: "rules", searchProbes: true, judgeParaphrases: true });
    expect(rules.searchProbes).toEqual({ budget: 400 });
    expect(cliCommand(rules, "tiny-vlm", "pope.jsonl")).not.toContain("--judge-paraphrases");
  });
});
