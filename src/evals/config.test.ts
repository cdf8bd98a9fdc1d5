import { describe, expect, it } from "vitest";
import { buildEvaluators, parseEvalConfig } from "./config.ts";
import { ctx } from "./evaluators/testing.ts";
import { regex } from "./evaluators/regex.ts";
import type { Judge } from "./judge.ts";

describe("eval config", () => {
  const base = { dataset: "pope.jsonl", model: "tiny-vlm", evaluators: ["yesNo"] };
  it("accepts a full config", () => {
    const c = parseEvalConfig({
      ...base,
      name: "pope",
      select: { sample: 50 },
      repeats: 3,
      cluster: true,
      generation: { temperature: 0.7, maxNewTokens: 3, seed: 1 },
      gate: { threshold: 0.8 },
    });
    expect(c.repeats).toBe(3);
  });
  it("names the first wrong field and what was expected", () => {
    expect(() => parseEvalConfig({ ...base, repeats: 0 })).toThrow(
      "eval config: repeats is 0; expected a positive integer",
    );
    expect(() => parseEvalConfig({ ...base, evaluators: ["nope"] })).toThrow(
      /evaluators\[0\] is "nope"; expected a type among exact, contains/,
    );
    expect(() => parseEvalConfig({ ...base, generation: { temp: 1 } })).toThrow(
      /generation\.temp is 1; expected one of temperature/,
    );
    expect(() => parseEvalConfig({ ...base, extra: 1 })).toThrow(/key 'extra'/);
    expect(() => parseEvalConfig({ model: "m", evaluators: ["yesNo"] })).toThrow(/dataset is missing/);
  });
  it("builds evaluators from JSON, with the same versions as the factories", async () => {
    const judged: string[] = [];
    const fake: Judge = async (p) => (judged.push(p), "PASS ok");
    const evs = buildEvaluators(
      ["yesNo", { type: "regex", pattern: "^(yes|no)", flags: "i", name: "format" }, { type: "judge", rubric: "r" }],
      () => fake,
    );
    expect(evs.map((e) => e.name)).toEqual(["yesNo", "format", "judge"]);
    expect(evs[1]!.version).toBe(regex("^(yes|no)", "i", { name: "format" }).version);
    expect(await evs[2]!.check(ctx("yes", "yes"))).toMatchObject({ passed: true, reason: "ok" });
    expect(() => buildEvaluators([{ type: "regex" }])).toThrow(/regex\.pattern is missing; expected a string/);
    expect(() => buildEvaluators([{ type: "fuzzy", threshold: "0.9" }])).toThrow(
      'eval config: fuzzy.threshold is "0.9"; expected a number',
    );
    expect(() => buildEvaluators([{ type: "exact", normalize: "yes" }])).toThrow(
      /exact\.normalize is "yes"; expected true or false/,
    );
    expect(() => buildEvaluators([{ type: "judge", baseUrl: "http://localhost:8000/v1", rubric: "r" }])).toThrow(
      /judge\.model is missing; expected a string/,
    );
  });
});
