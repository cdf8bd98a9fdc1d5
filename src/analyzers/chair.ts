/**
 * CHAIR over captions (Rohrbach et al. 2018): CHAIR_i, the share of mentioned
 * objects that are not in the image, and CHAIR_s, the share of captions with at
 * least one. Needs cases whose `meta.objects` lists the objects present.
 */
import type { Analyzer, ProbeItem } from "./types.ts";

/** Object names (two-word "colour shape" or one word) mentioned in a caption, from a vocabulary. */
export function mentioned(caption: string, vocabulary: readonly string[]): string[] {
  const text = ` ${caption
    .toLowerCase()
    .replace(/[^a-z0-9 ]+/g, " ")
    .replace(/\s+/g, " ")} `;
  return vocabulary.filter((v) => text.includes(` ${v.toLowerCase()} `));
}

/**
 * CHAIR_i and CHAIR_s of the items with `meta.objects`.
 * Example: caption "a red circle and a blue square", objects ["red circle"] → CHAIR_i 0.5, CHAIR_s 1.
 */
export function chairMetrics(items: readonly ProbeItem[]): { captions: number; chairI: number; chairS: number } {
  const withObjects = items.filter((i) => Array.isArray(i.case.meta.objects));
  const vocabulary = [...new Set(withObjects.flatMap((i) => (i.case.meta.objects as unknown[]).map(String)))];
  let mentionedCount = 0,
    hallucinated = 0,
    bad = 0;
  for (const i of withObjects) {
    const present = new Set((i.case.meta.objects as unknown[]).map(String));
    const said = mentioned(i.output, vocabulary);
    const wrong = said.filter((o) => !present.has(o)).length;
    mentionedCount += said.length;
    hallucinated += wrong;
    if (wrong) bad++;
  }
  return {
    captions: withObjects.length,
    chairI: mentionedCount ? hallucinated / mentionedCount : NaN,
    chairS: withObjects.length ? bad / withObjects.length : NaN,
  };
}

/** The CHAIR analyzer: run-level CHAIR_i / CHAIR_s over caption cases (no per-case signal). */
export const chair: Analyzer = {
  name: "chair",
  description: "CHAIR_i and CHAIR_s over captions (objects mentioned that are not in the image)",
  tags: ["image", "content"],
  requires: ["generate"],
  reductions: [],
  parameters: { vocabulary: "the union of every case's meta.objects" },
  run(items) {
    const m = chairMetrics(items);
    return {
      summary: m.captions
        ? `chair: CHAIR_i ${m.chairI.toFixed(3)}, CHAIR_s ${m.chairS.toFixed(3)} over ${m.captions} captions`
        : "chair: no caption cases (meta.objects) in this run",
      findings: { signals: [], ...m },
      artifacts: { perCase: {} },
    };
  },
};
