/**
 * Reading a yes/no answer out of free text. It lives in core because two layers need the same reading:
 * the `yesNo` evaluator (which labels cases) and the POPE analyzer (which reports per-split metrics).
 */
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
