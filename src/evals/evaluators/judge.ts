import { canonicalJson } from "../../datasets/canonical.ts";
import { sha256Hex } from "../../datasets/hash.ts";
import { asText, defineEvaluator } from "../evaluator.ts";
import { memoryJudgeCache, parseVerdict, type Judge, type JudgeCache } from "../judge.ts";
import type { Evaluator } from "../types.ts";

export interface JudgeOptions {
  readonly name?: string;
  /** Where verdicts are cached; a fresh in-memory cache per evaluator by default. */
  readonly cache?: JudgeCache;
  /** Names the judge when the function carries no `id` (it becomes part of the version). */
  readonly judgeId?: string;
}

/** What the judge is shown for one trial: the rubric, the question, the expected answer and the model's answer. */
export function judgePrompt(rubric: string, prompt: string, expected: unknown, output: unknown): string {
  return [
    "You are grading an AI model's answer against a rubric.",
    `Rubric: ${rubric}`,
    `Question: ${prompt}`,
    ...(expected === undefined || expected === null ? [] : [`Expected answer: ${asText(expected)}`]),
    `Model's answer: ${asText(output)}`,
    "Reply with PASS or FAIL on the first line, then one sentence saying why.",
  ].join("\n");
}

/**
 * Does an LLM judge the answer acceptable under this rubric? The judge (a
 * local model or an OpenAI-compatible endpoint, see `Judge`) answers PASS or
 * FAIL with a reason. Verdicts are cached by the evaluator's version (judge id
 * + rubric) and the exact prompt it was shown, so re-judging the same output
 * costs nothing. An unparsable answer makes this check errored, never a fail.
 *
 * @example judge(openAICompatibleJudge({ baseUrl, model: "qwen" }), "The answer names only objects in the scene.")
 */
export function judge(model: Judge, rubric: string, options: JudgeOptions = {}): Evaluator {
  if (typeof model !== "function")
    throw new TypeError("judge(): the first argument must be a Judge, (prompt) => Promise<string>");
  if (typeof rubric !== "string" || !rubric.trim())
    throw new TypeError("judge(): the rubric must be a non-empty string");
  const judgeId = options.judgeId ?? model.id ?? "judge";
  const cache = options.cache ?? memoryJudgeCache();
  const evaluator = defineEvaluator({
    name: options.name ?? "judge",
    kind: "judge",
    parameters: { judge: judgeId, rubric },
    revision: 1,
    check: async ({ output, expected, input, signal }) => {
      const prompt = judgePrompt(rubric, input.prompt, expected, output);
      const key = sha256Hex(canonicalJson({ version: evaluator.version, prompt }));
      const cached = await cache.get(key);
      if (cached) return { passed: cached.passed, reason: cached.reason, data: { cached: true } };
      const verdict = parseVerdict(await model(prompt, signal ? { signal } : undefined));
      await cache.set(key, verdict);
      return { passed: verdict.passed, reason: verdict.reason, data: { cached: false } };
    },
  });
  return evaluator;
}
