/**
 * Question paraphrases from a judge LLM (the user's OpenAI-compatible
 * endpoint), as one more edit family of the probe search beside the rule
 * paraphrases. The judge only proposes wordings; each is checked here before
 * the search may use it, and the expected answer stays the parent's by
 * construction (the image is not touched), never the judge's or the model's.
 */
import type { Judge } from "../judge.ts";
import type { ProbeFamily } from "./probe-search.ts";

/** The family a judge's paraphrases form in the probe tree: one region, the judge's wordings of the seed's question. */
export const JUDGE_PARAPHRASE_FAMILY: ProbeFamily = { name: "judge-paraphrase", arms: ["judge"] };

/** What a paraphrase must keep and must not bring in. */
export interface AskedTerms {
  /** The words naming the asked object and its attribute (e.g. ["red", "circle"]); each must appear. */
  readonly keep: readonly string[];
  /** Words of other objects or attributes (other colours, shapes, labels); none may appear. */
  readonly avoid: readonly string[];
}

/** Words a yes/no question opens with ("is there…", "do you see…", "there is a … ?" as the rule paraphrases say). */
const OPENERS = new Set([
  "is",
  "are",
  "was",
  "were",
  "does",
  "do",
  "did",
  "can",
  "could",
  "would",
  "will",
  "has",
  "have",
  "should",
  "may",
  "might",
  "there",
]);
/** Words that give the answer away or flip it ("is there no red circle ?" asks the opposite). */
const LEAK_OR_NEGATION = /\b(yes|no|not|never|none|nothing|nobody|without|absent|missing|lacks?|lacking)\b|n't\b/i;
/** At most this many words, and this many characters: a rewording, not a story. */
const MAX_WORDS = 24;
const MAX_CHARS = 160;
/** Wordings asked of the judge per question, and questions asked per search (one request each). */
export const PARAPHRASES_PER_QUESTION = 4;
export const MAX_QUESTIONS = 40;

const words = (text: string) => text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
const hasWord = (ws: readonly string[], w: string) => ws.some((x) => x === w || x === `${w}s` || x === `${w}es`);

/**
 * Is `candidate` a usable paraphrase of `question`: the same asked object and
 * attribute, still one yes/no question, of bounded length, with no answer
 * leaked and no negation? Gives the paraphrase in the question's own style
 * (its `<image>` token, lower case and spaced punctuation where it has them),
 * or the reason it is dropped.
 *
 * @example checkParaphrase("<image> is there a red circle ?", "Can you see a red circle?", { keep: ["red", "circle"], avoid: ["blue"] }) // { paraphrase: "<image> can you see a red circle ?" }
 */
export function checkParaphrase(
  question: string,
  candidate: string,
  asked: AskedTerms,
): { readonly paraphrase: string } | { readonly reason: string } {
  const image = /^<image>\s*/.exec(question.trim());
  const base = question.trim().replace(/^<image>\s*/, "");
  let text = candidate
    .trim()
    .replace(/^(?:\d+\s*[.):]|[-*•])\s*/, "")
    .replace(/^["'“‘]+|["'”’]+$/g, "")
    .trim();
  if (!text) return { reason: "empty" };
  if (/[<>`{}[\]\\]|[^\x20-\x7e]/.test(text))
    return { reason: "holds markup, tokens or characters outside plain text" };
  if (text.length > MAX_CHARS) return { reason: `longer than ${MAX_CHARS} characters` };
  const ws = words(text);
  if (ws.length < 3 || ws.length > MAX_WORDS) return { reason: `${ws.length} words (expected 3 to ${MAX_WORDS})` };
  if (!text.endsWith("?") || (text.match(/\?/g) ?? []).length !== 1)
    return { reason: "not one question ending in '?'" };
  // "…, yes or no ?" names both answers, as a rule paraphrase does; any other yes/no/negation is a leak or a flip.
  const withoutChoice = text.replace(/\byes or no\b/gi, "");
  const leak = LEAK_OR_NEGATION.exec(withoutChoice);
  if (leak) return { reason: `'${leak[0]}' gives the answer away or negates the question` };
  if (!OPENERS.has(ws[0]!)) return { reason: `'${ws[0]}' does not open a yes/no question` };
  if (/\bor\b/i.test(withoutChoice)) return { reason: "asks a choice ('or'), not a yes/no question" };
  const missing = asked.keep.filter((w) => !hasWord(ws, w.toLowerCase()));
  if (missing.length) return { reason: `does not name ${missing.map((w) => `'${w}'`).join(", ")} of the asked object` };
  const keep = new Set(asked.keep.map((w) => w.toLowerCase()));
  const other = asked.avoid.filter((w) => !keep.has(w.toLowerCase()) && hasWord(ws, w.toLowerCase()));
  if (other.length) return { reason: `names ${other.map((w) => `'${w}'`).join(", ")}, another object or attribute` };
  if (base === base.toLowerCase()) text = text.toLowerCase();
  if (/ [?,]/.test(base)) text = text.replace(/\s*([?,])/g, " $1");
  if (words(text).join(" ") === words(base).join(" ")) return { reason: "the question itself, not a rewording" };
  return { paraphrase: `${image ? "<image> " : ""}${text}` };
}

/** What the judge gave: the checked paraphrases per question, and every wording dropped, with why. */
export interface JudgeParaphrases {
  readonly judge: string;
  /** Paraphrases that passed the check, by the question as the seed asks it. */
  readonly byQuestion: ReadonlyMap<string, readonly string[]>;
  readonly requests: number;
  readonly accepted: number;
  readonly dropped: readonly { readonly question: string; readonly text: string; readonly reason: string }[];
  /** Requests that failed (the endpoint down, a timeout): the search goes on with the other families. */
  readonly failed: readonly { readonly question: string; readonly error: string }[];
}

/**
 * Which meaning-preserving rewordings of these yes/no questions does the
 * judge propose, and which survive {@link checkParaphrase}? One request per
 * distinct question (at most {@link MAX_QUESTIONS}); a failed request is kept
 * with its error and the others go on. An abort stops at once.
 *
 * @example
 * const p = await judgeParaphrases(judge, [{ question: "<image> is there a red circle ?", asked: { keep: ["red", "circle"], avoid: ["blue"] } }]);
 * p.byQuestion.get("<image> is there a red circle ?") // ["<image> can you see a red circle ?", …]
 */
export async function judgeParaphrases(
  judge: Judge,
  questions: readonly { readonly question: string; readonly asked: AskedTerms }[],
  options: { readonly signal?: AbortSignal } = {},
): Promise<JudgeParaphrases> {
  const distinct = [...new Map(questions.map((q) => [q.question, q])).values()].slice(0, MAX_QUESTIONS);
  const byQuestion = new Map<string, string[]>();
  const dropped: { question: string; text: string; reason: string }[] = [];
  const failed: { question: string; error: string }[] = [];
  let accepted = 0;
  for (const { question, asked } of distinct) {
    options.signal?.throwIfAborted();
    let reply: string;
    try {
      reply = await judge(paraphrasePrompt(question), options.signal ? { signal: options.signal } : {});
    } catch (error) {
      if (options.signal?.aborted) throw error;
      failed.push({ question, error: error instanceof Error ? error.message : String(error) });
      continue;
    }
    const kept: string[] = [];
    const lines = reply
      .split("\n")
      .map((l) => l.trim())
      // Chat models often fence their answer: the fence lines are not wordings.
      .filter((l) => l && !l.startsWith("```"));
    for (const line of lines.slice(0, 2 * PARAPHRASES_PER_QUESTION)) {
      const checked = checkParaphrase(question, line, asked);
      if ("reason" in checked) dropped.push({ question, text: line.slice(0, 200), reason: checked.reason });
      else if (kept.includes(checked.paraphrase))
        dropped.push({ question, text: line.slice(0, 200), reason: "a repeat of another paraphrase" });
      else kept.push(checked.paraphrase);
    }
    if (lines.length === 0) dropped.push({ question, text: "", reason: "the judge replied with no wording" });
    accepted += kept.length;
    if (kept.length) byQuestion.set(question, kept);
  }
  return { judge: judge.id ?? "judge", byQuestion, requests: distinct.length, accepted, dropped, failed };
}

/** The request: the question as a person reads it, and what a rewording must keep. */
function paraphrasePrompt(question: string): string {
  return [
    `Rewrite this yes/no question about an image in ${PARAPHRASES_PER_QUESTION} different ways that keep its meaning exactly.`,
    "Each must ask about the same object with the same attributes, stay a question answered yes or no,",
    "use no negation and no hint of the answer, and be at most 20 words.",
    `Question: ${question.replace(/^<image>\s*/, "")}`,
    "Write one rewording per line and nothing else.",
  ].join("\n");
}
