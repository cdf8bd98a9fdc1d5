import { asText, defineEvaluator } from "../evaluator.ts";
import type { CheckResult, Evaluator } from "../types.ts";

export type YesNoAnswer = "yes" | "no" | "unknown";

/** Which rule decided an extracted answer, so a reader can audit the extraction. */
export type YesNoRule = "first-word" | "only-yes" | "only-negation" | "both" | "neither" | "empty";

const NEGATIONS = new Set(["no", "not", "isn't", "aren't", "doesn't", "don't", "none", "nothing", "without"]);

/**
 * What did the model answer to a yes/no question? The first word when it is
 * `yes` or `no`; otherwise `yes` when only "yes" appears, `no` when only a
 * negation ("no", "not", "isn't", …) does, and `unknown` when both, neither, or
 * nothing appear — never a silent default to one side (POPE's original rule
 * reads anything without a negation as "yes", which hides non-answers).
 *
 * @example extractYesNo("Yes, there is a red circle.") // { answer: "yes", rule: "first-word" }
 * @example extractYesNo("there is not a circle") // { answer: "no", rule: "only-negation" }
 */
export function extractYesNo(text: string): { answer: YesNoAnswer; rule: YesNoRule } {
  const words = text
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .split(/[^a-z']+/)
    .map((w) => w.replace(/^'+|'+$/g, ""))
    .filter(Boolean);
  if (words.length === 0) return { answer: "unknown", rule: "empty" };
  if (words[0] === "yes") return { answer: "yes", rule: "first-word" };
  if (words[0] === "no") return { answer: "no", rule: "first-word" };
  const yes = words.includes("yes");
  const negated = words.some((w) => NEGATIONS.has(w));
  if (yes && negated) return { answer: "unknown", rule: "both" };
  if (yes) return { answer: "yes", rule: "only-yes" };
  if (negated) return { answer: "no", rule: "only-negation" };
  return { answer: "unknown", rule: "neither" };
}

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
