/**
 * Does the answer change under a meaning-preserving rewrite of the prompt?
 * One extra greedy generation per case; a flip is a per-case binary signal.
 */
import { collect, type Analyzer } from "./types.ts";
import { answerKey, rewrite } from "./rewrites.ts";

const REWRITE = "context";
/** Text-only prompts get the rewrite that does not mention an image. */
const TEXT_REWRITE = "restate";

function rewriteFor(prompt: string): string {
  return prompt.includes("<image>") ? REWRITE : TEXT_REWRITE;
}

/** The prompt-contrast analyzer: per-case `promptContrast.flip` (1 = the answer changed under the rewrite). */
export const promptContrast: Analyzer = {
  name: "promptContrast",
  description: `answer flips under a meaning-preserving rewrite: '${REWRITE}' (${rewrite(REWRITE).description}) for image prompts, '${TEXT_REWRITE}' (${rewrite(TEXT_REWRITE).description}) for text`,
  tags: ["prompt"],
  requires: ["generate"],
  reductions: [],
  parameters: { rewrite: { image: REWRITE, text: TEXT_REWRITE }, decoding: "greedy" },
  async probe(item, context) {
    const prompt = item.case.input.prompt;
    const answer = await context.generate({ ...context.input, prompt: rewrite(rewriteFor(prompt)).apply(prompt) });
    return { promptContrastAnswer: answer };
  },
  signals(item): Record<string, number> {
    const other = item.extra?.promptContrastAnswer;
    if (typeof other !== "string") return {};
    return { "promptContrast.flip": answerKey(other) === answerKey(item.output) ? 0 : 1 };
  },
  run(items) {
    const perCase = collect(items, (i) => promptContrast.signals!(i));
    const flips = (perCase["promptContrast.flip"] ?? []).filter((x) => x === 1).length;
    const n = (perCase["promptContrast.flip"] ?? []).filter(Number.isFinite).length;
    return {
      summary: `promptContrast: the answer changed on ${flips} of ${n} cases under a meaning-preserving rewrite`,
      findings: { signals: Object.keys(perCase), flips, n },
      artifacts: { perCase },
    };
  },
};
