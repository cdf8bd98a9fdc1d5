/**
 * Rule-based names for what a signal's association would mean: the mechanism
 * a hypothesis proposes, by the signal's name or tags and its direction. A
 * column this table does not know gets a plain covariate statement.
 */
import type { Direction } from "./association.ts";
import { tagsOf } from "./protocol.ts";

export interface MechanismRule {
  readonly match: RegExp;
  readonly tags: readonly string[];
  /** The mechanism when failure goes with more (+1) or less (−1) of the signal. */
  readonly up: string;
  readonly down: string;
}

/** The known mechanisms, first match wins: order the specific patterns before the general ones. */
export const MECHANISMS: readonly MechanismRule[] = [
  {
    match: /^expected(=|$)/,
    tags: ["content"],
    up: "answer bias: the model fails when the expected answer is this one — it leans toward the other answer whatever the input shows",
    down: "answer bias: the model fails when the expected answer is not this one — it leans toward this answer whatever the input shows",
  },
  {
    match: /image.?attention|attention.?share|imageShare|image_share|attn.*image/i,
    tags: ["attention", "image"],
    up: "over-reliance on the image region attended (failures look more at the image, yet answer wrongly)",
    down: "weak visual grounding: failing answers attend less to the image tokens",
  },
  {
    match: /sink/i,
    tags: ["attention", "sink"],
    up: "attention sink: failing answers park more attention on the first token instead of the evidence",
    down: "less attention parked on the first token in failures",
  },
  {
    match: /attention.?entropy|attnEntropy/i,
    tags: ["attention"],
    up: "diffuse attention: failing answers spread attention without focus",
    down: "peaked attention: failing answers concentrate attention on few tokens",
  },
  {
    match: /rollout|mapPeak/i,
    tags: ["attention", "image"],
    up: "over-concentrated attention on one image region in failures",
    down: "attention spread thinly over the image in failures",
  },
  {
    // Probabilities and log-probabilities of the answer: higher means more confident (the opposite of entropy).
    match: /answerProb|logprob|confidence/i,
    tags: ["uncertainty"],
    up: "over-confident errors: the model gives the answers it gets wrong a higher probability",
    down: "uncertain decoding: the model gives the answers it gets wrong a lower probability",
  },
  {
    match: /token.?entropy|uncertain/i,
    tags: ["uncertainty"],
    up: "uncertain decoding: the next-token distribution is flatter where the model answers wrongly",
    down: "over-confident errors: the next-token distribution is sharper where the model answers wrongly",
  },
  {
    match: /top1.?layer|logit.?lens|layer/i,
    tags: ["layer"],
    up: "late answer formation: the final answer becomes top-1 only in late layers in failures",
    down: "early commitment: the answer is fixed in early layers in failures",
  },
  {
    match: /prompt.?contrast|flip|paraphrase/i,
    tags: ["prompt"],
    up: "prompt sensitivity: answers that change under meaning-preserving rewrites fail more",
    down: "failures are stable under rewrites (a consistent error, not a phrasing effect)",
  },
  {
    match: /co.?occurr|adversarial|popular|prior|partner/i,
    tags: ["prior"],
    up: "co-occurrence prior: the model answers from what usually appears together, not from the image",
    down: "the co-occurrence prior protects: these cases fail less",
  },
];

/**
 * The mechanism a signal's association proposes, and the tags it carries.
 * Example: `mechanismOf("imageAttentionShare.pooled", -1)` →
 * `{ mechanism: "weak visual grounding: …", tags: ["attention", "image"], known: true }`.
 */
export function mechanismOf(
  signal: string,
  direction: Direction,
  extraTags: readonly string[] = [],
): { mechanism: string; tags: string[]; known: boolean } {
  const rule = MECHANISMS.find((r) => r.match.test(signal));
  const tags = [...new Set([...(rule?.tags ?? []), ...extraTags, ...tagsOf(signal.replace(/[_.=-]/g, " "))])];
  if (rule) return { mechanism: direction > 0 ? rule.up : rule.down, tags, known: true };
  const more = direction > 0 ? "more" : "less";
  return {
    mechanism: `covariate: cases with ${more} '${signal}' fail more often (an association; no mechanism is implied)`,
    tags,
    known: false,
  };
}
