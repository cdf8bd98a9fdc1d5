import { asText, defineEvaluator } from "../evaluator.ts";
import type { CheckResult, Evaluator } from "../types.ts";
import { extractYesNo } from "../../core/yes-no.ts";

export { extractYesNo, type YesNoAnswer, type YesNoRule } from "../../core/yes-no.ts";

function expectedAnswer(expected: unknown): "yes" | "no" {
  if (expected === true) return "yes";
  if (expected === false) return "no";
  if (typeof expected === "string") {
    const e = expected.trim().toLowerCase();
    if (e === "yes" || e === "no") return e;
  }
  throw new Error(`yesNo(): expected is ${JSON.stringify(expected ?? null)}; it must be "yes" or "no" (or a boolean)`);
}

/**
 * POPE's numbers over a run's yes/no verdicts: accuracy, precision / recall /
 * F1 with "yes" as the positive class, the share of "yes" answers, and how
 * often no answer could be extracted.
 *
 * @example popeMetrics([{ passed: true, data: { answer: "yes", expected: "yes" } }]) // { accuracy: 1, precision: 1, recall: 1, f1: 1, yesRatio: 1, unknownRate: 0 }
 */
export function popeMetrics(results: readonly CheckResult[]): Record<string, number> {
  let tp = 0,
    fp = 0,
    fn = 0,
    yes = 0,
    unknown = 0,
    correct = 0,
    n = 0;
  for (const r of results) {
    const answer = r.data?.["answer"];
    const expected = r.data?.["expected"];
    if (typeof answer !== "string" || typeof expected !== "string") continue;
    n++;
    if (r.passed) correct++;
    if (answer === "yes") yes++;
    if (answer === "unknown") unknown++;
    if (answer === "yes" && expected === "yes") tp++;
    if (answer === "yes" && expected === "no") fp++;
    if (answer !== "yes" && expected === "yes") fn++;
  }
  if (n === 0) return {};
  const out: Record<string, number> = { accuracy: correct / n, yesRatio: yes / n, unknownRate: unknown / n };
  if (tp + fp > 0) out["precision"] = tp / (tp + fp);
  if (tp + fn > 0) out["recall"] = tp / (tp + fn);
  if (out["precision"] !== undefined && out["recall"] !== undefined && tp > 0)
    out["f1"] = (2 * out["precision"] * out["recall"]) / (out["precision"] + out["recall"]);
  return out;
}

/**
 * Did the model give the expected yes/no answer (POPE)? Extracts yes / no /
 * unknown from the output (see `extractYesNo`) and names the rule it used;
 * `unknown` is a wrong answer, not an error. The run-level aggregate gives
 * POPE's accuracy, precision, recall, F1 and yes-ratio.
 *
 * @example yesNo().check({ output: "no .", expected: "yes", … }) // { passed: false, reason: 'answered "no" (first-word), expected "yes"' }
 */
export function yesNo(options: { readonly name?: string } = {}): Evaluator {
  return defineEvaluator({
    name: options.name ?? "yesNo",
    parameters: {},
    revision: 1,
    check: ({ output, expected }) => {
      const want = expectedAnswer(expected);
      const { answer, rule } = extractYesNo(asText(output));
      const passed = answer === want;
      return {
        passed,
        data: { answer, rule, expected: want },
        ...(passed ? {} : { reason: `answered "${answer}" (${rule}), expected "${want}"` }),
      };
    },
    aggregate: popeMetrics,
  });
}
