import type { FailureCase } from "../core/index.ts";
import { chair, exact, yesNo } from "./evaluators/index.ts";
import type { Evaluator } from "./types.ts";

/**
 * Which evaluators label these cases when an investigation is given none?
 * POPE-style yes/no extraction when every expected answer is yes or no, CHAIR
 * when every case lists the objects in its image (`meta.objects`, the
 * vocabulary taken from all of them), otherwise exact match. The CLI's
 * `evalrx investigate` and the page's investigation both label by this rule,
 * so the same cases get the same labels.
 *
 * @example labelEvaluators([{ id: "a", input: { prompt: "Is there a cat?" }, expected: "Yes", tags: [], status: "active", meta: {} }]).map((e) => e.name) // ["yesNo"]
 */
export function labelEvaluators(cases: readonly FailureCase[]): Evaluator[] {
  if (cases.length === 0) throw new Error("labelEvaluators(): no case to label; select at least one case");
  const answer = (c: FailureCase) =>
    String(c.expected ?? "")
      .trim()
      .toLowerCase();
  if (cases.every((c) => answer(c) === "yes" || answer(c) === "no")) return [yesNo()];
  if (cases.every((c) => Array.isArray(c.meta.objects))) {
    const vocabulary = [...new Set(cases.flatMap((c) => (c.meta.objects as unknown[]).map(String)))];
    return [chair(vocabulary)];
  }
  return [exact()];
}
