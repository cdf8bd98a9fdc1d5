/**
 * The judge the loop may consult (to word mechanisms, to decide protocol
 * consistency). One interface for every implementation — the evals' `Judge`:
 * an OpenAI-compatible endpoint (`openAICompatibleJudge`), a loaded model
 * (`modelJudge`) — and, by default, none: the loop's rules decide alone.
 */
import type { Judge } from "../evals/judge.ts";
import { ruleConsistency, type ConsistencyVerdict, type ExperimentProtocol } from "./protocol.ts";

export type { Judge };

/**
 * Does the hypothesis answer the question asked? The rules decide when no
 * judge is configured; a judge is asked for YES or NO on its first line, and
 * an answer that is neither falls back to the rules (said in the reason).
 *
 * Example: `await consistency({ question: "What predicts failure?" }, "H1: …", ["attention"])`
 * → `{ consistent: true, by: "rules", reason: "the question names no specific factor, …" }`.
 */
export async function consistency(
  protocol: ExperimentProtocol,
  hypothesisText: string,
  signalTags: readonly string[],
  judge?: Judge,
): Promise<ConsistencyVerdict> {
  const rules = ruleConsistency(protocol, signalTags);
  if (!judge) return rules;
  const answer = await judge(
    [
      `Question asked: ${protocol.question}`,
      `Hypothesis: ${hypothesisText}`,
      "Does this hypothesis answer the question asked? Answer YES or NO on the first line, then one sentence why.",
    ].join("\n"),
  );
  const first = answer.trim().split("\n")[0] ?? "";
  const m = /^\W*(yes|no)\b\W*(.*)$/i.exec(first);
  if (!m) return { ...rules, reason: `${rules.reason} (the judge answered neither YES nor NO)` };
  return { consistent: m[1]!.toLowerCase() === "yes", by: "judge", reason: m[2] || first };
}
