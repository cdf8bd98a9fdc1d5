/**
 * Does the answer change under a meaning-preserving rewrite of the prompt?
 * One extra greedy generation per case; a flip is a per-case binary signal.
 */
import { collect, type Analyzer } from "./types.ts";
import { answerKey, rewrite } from "./rewrites.ts";

const REWRITE = "context";

export const promptContrast: Analyzer = {
  name: "promptContrast",
  description: `answer flips under the meaning-preserving rewrite '${REWRITE}' (${rewrite(REWRITE).description})`,
  tags: ["prompt"],
  requires: ["generate"],
  reductions: [],
  parameters: { rewrite: REWRITE, decoding: "greedy" },
  async probe(item, context) {
    const answer = await context.generate({ ...context.input, prompt: rewrite(REWRITE).apply(item.case.input.prompt) });
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
      summary: `promptContrast: the answer changed on ${flips} of ${n} cases under the rewrite '${REWRITE}'`,
      findings: { signals: Object.keys(perCase), flips, n },
      artifacts: { perCase },
    };
  },
};
