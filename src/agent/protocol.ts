/**
 * What the user asked, and how that steers the loop: the question and failure
 * patterns are mapped to tags (attention, uncertainty, prompt, …) that rank
 * the analyzers in M1 and decide the protocol-consistency gate in M4.
 * Rule-based by default; an LLM judge may take the gate when configured.
 */

/** The user's plain-language question and, optionally, failure patterns they suspect. */
export interface ExperimentProtocol {
  readonly question: string;
  readonly failurePatterns?: readonly string[];
}

/** Keyword rules from plain language to the factor tags a question names. */
const FACTOR_RULES: readonly (readonly [RegExp, string])[] = [
  [/\battend\w*|attention|look(s|ing)? at|focus\w*/i, "attention"],
  [/\bimage\w*|visual\w*|vision|see(s|ing)?|pixel\w*|picture\w*|ground\w*/i, "image"],
  [/\bsink\w*|first token|bos\b/i, "sink"],
  [/\bentropy|uncertain\w*|confiden\w*|calibrat\w*|probab\w*|logprob\w*/i, "uncertainty"],
  [/\blayer\w*|depth|logit lens|residual/i, "layer"],
  [/\bprompt\w*|phrasing|paraphras\w*|wording|rewrit\w*|instruction\w*/i, "prompt"],
  [/\bco-?occurr\w*|prior\w*|bias\w*|popular|adversarial|frequen\w*/i, "prior"],
  [/\blength|long\w*|short\w*|token count|verbos\w*/i, "length"],
  [/\btool\w*|call\w*|agent\w*/i, "tool"],
  [/\bobject\w*|categor\w*|class\w*|topic\w*|domain\w*/i, "content"],
];

/**
 * The factor tags a text mentions.
 * Example: `tagsOf("Do hallucinations come from weak attention to the image?")` → `["attention", "image"]`.
 */
export function tagsOf(text: string): string[] {
  return FACTOR_RULES.filter(([re]) => re.test(text)).map(([, tag]) => tag);
}

/** The tags of a protocol (question and failure patterns together). */
export function protocolTags(protocol: ExperimentProtocol): string[] {
  return [...new Set([protocol.question, ...(protocol.failurePatterns ?? [])].flatMap(tagsOf))];
}

/** The answer of the rule-based protocol-consistency gate, with its reason. */
export interface ConsistencyVerdict {
  readonly consistent: boolean;
  readonly reason: string;
  /** "rules" or "judge". */
  readonly by: string;
}

/**
 * Does a hypothesis resting on a signal with `signalTags` answer the question asked?
 *
 * A question that only names the outcome ("what predicts the failures?") is
 * answered by any signal that predicts failure. A question that names factors
 * ("… attention to the image?") is answered only by a signal sharing one of
 * those factor tags: an association with prompt length does not answer a
 * question about attention, however strong it is.
 *
 * Example: `ruleConsistency({ question: "Why does attention fail?" }, ["prompt"])` → inconsistent.
 */
export function ruleConsistency(protocol: ExperimentProtocol, signalTags: readonly string[]): ConsistencyVerdict {
  const asked = protocolTags(protocol);
  if (asked.length === 0)
    return {
      consistent: true,
      by: "rules",
      reason: "the question names no specific factor, so any signal that predicts failure answers it",
    };
  const shared = asked.filter((tag) => signalTags.includes(tag));
  return shared.length
    ? {
        consistent: true,
        by: "rules",
        reason: `the question asks about ${shared.join(", ")}, which this signal measures`,
      }
    : {
        consistent: false,
        by: "rules",
        reason: `the question asks about ${asked.join(", ")}; this signal measures ${signalTags.length ? signalTags.join(", ") : "none of these"}`,
      };
}
