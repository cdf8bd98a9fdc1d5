import { expect, it } from "vitest";
import { DEFAULT_JUDGE_FIELDS, judgeChoiceOf, rememberJudge, rememberedJudge } from "./judge-settings.ts";

it("makes the judge choice from the fields, naming a wrong one", () => {
  expect(judgeChoiceOf(DEFAULT_JUDGE_FIELDS)).toEqual({ kind: "rules" });
  expect(() => judgeChoiceOf({ ...DEFAULT_JUDGE_FIELDS, judge: "endpoint" })).toThrow(/^judge model: /);
  expect(judgeChoiceOf({ ...DEFAULT_JUDGE_FIELDS, judge: "endpoint", judgeModel: "m", judgeKey: " k " })).toEqual({
    kind: "endpoint",
    url: "http://127.0.0.1:11434/v1",
    model: "m",
    apiKey: "k",
  });
});

it("remembers the endpoint, and the key only when asked", () => {
  const kept = new Map<string, string>();
  const storage = {
    setItem: (k: string, v: string) => void kept.set(k, v),
    removeItem: (k: string) => void kept.delete(k),
  };
  const fields = {
    ...DEFAULT_JUDGE_FIELDS,
    judge: "endpoint" as const,
    judgeModel: "m",
    judgeKey: "sk",
    rememberJudge: true,
  };
  rememberJudge(fields, storage);
  expect([...kept.values()][0]).not.toContain("sk");
  rememberJudge({ ...fields, rememberKey: true }, storage);
  expect(rememberedJudge([...kept.values()][0]!)).toMatchObject({ judgeModel: "m", judgeKey: "sk", rememberKey: true });
  rememberJudge({ ...fields, rememberJudge: false }, storage);
  expect(kept.size).toBe(0);
  expect(rememberedJudge("not json")).toEqual({});
});
