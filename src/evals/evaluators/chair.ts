import type { FailureCase } from "../../core/index.ts";
import { asText, defineEvaluator } from "../evaluator.ts";
import type { CheckResult, Evaluator } from "../types.ts";

export interface ChairOptions {
  /** The objects truly in the image; default `row.meta.objects`, else `row.meta.scene_objects`, else `expected` when it is a list. */
  readonly objects?: (row: FailureCase) => readonly string[] | undefined;
  readonly name?: string;
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * Which vocabulary objects does a caption mention? Scans the words left to
 * right and takes the longest phrase (a vocabulary word or a synonym) at each
 * position, so "red circle" is one mention, not also "circle".
 *
 * @example mentionedObjects("a red circle and a square", ["red circle", "square", "circle"], {}) // ["red circle", "square"]
 */
export function mentionedObjects(
  text: string,
  vocabulary: readonly string[],
  synonyms: Readonly<Record<string, string>>,
): string[] {
  const phrases = new Map<string, string>();
  for (const v of vocabulary) phrases.set(words(v).join(" "), v);
  for (const [alias, canonical] of Object.entries(synonyms)) phrases.set(words(alias).join(" "), canonical);
  const longest = Math.max(0, ...[...phrases.keys()].map((p) => p.split(" ").length));
  const tokens = words(text);
  const found = new Set<string>();
  for (let i = 0; i < tokens.length;) {
    let matched = 0;
    for (let len = Math.min(longest, tokens.length - i); len >= 1 && !matched; len--) {
      const object = phrases.get(tokens.slice(i, i + len).join(" "));
      if (object !== undefined) {
        found.add(object);
        matched = len;
      }
    }
    i += matched || 1;
  }
  return [...found];
}

/**
 * CHAIR over a run: CHAIR_s, the share of captions that mention at least one
 * object not in the image, and CHAIR_i, hallucinated mentions over all
 * mentions (pooled over captions, as Rohrbach et al. 2018 define it).
 *
 * @example chairMetrics([{ passed: false, data: { mentioned: 2, hallucinated: 1 } }, { passed: true, data: { mentioned: 2, hallucinated: 0 } }]) // { CHAIR_s: 0.5, CHAIR_i: 0.25 }
 */
export function chairMetrics(results: readonly CheckResult[]): Record<string, number> {
  let captions = 0,
    withHallucination = 0,
    mentioned = 0,
    hallucinated = 0;
  for (const r of results) {
    const m = r.data?.["mentioned"];
    const h = r.data?.["hallucinated"];
    if (typeof m !== "number" || typeof h !== "number") continue;
    captions++;
    if (h > 0) withHallucination++;
    mentioned += m;
    hallucinated += h;
  }
  if (captions === 0) return {};
  return { CHAIR_s: withHallucination / captions, ...(mentioned > 0 ? { CHAIR_i: hallucinated / mentioned } : {}) };
}

/**
 * Does a caption mention objects that are not in the image? Mentions are
 * vocabulary phrases (and synonyms, mapped to their vocabulary word) found in
 * the output; the truth is the case's object list. Per case: passes when no
 * mention is hallucinated, score = 1 − CHAIR_i (the share of mentions that are
 * real; 1 when nothing is mentioned). The run aggregate gives CHAIR_s and CHAIR_i.
 *
 * @example chair(["red circle", "blue square"], {}).check({ output: "a red circle and a blue square", row: { meta: { objects: ["red circle"] } }, … })
 *   // { passed: false, score: 0.5, reason: 'mentions absent ["blue square"]' }
 */
export function chair(
  vocabulary: readonly string[],
  synonyms: Readonly<Record<string, string>> = {},
  options: ChairOptions = {},
): Evaluator {
  if (
    !Array.isArray(vocabulary) ||
    vocabulary.length === 0 ||
    !vocabulary.every((v) => typeof v === "string" && v.trim())
  )
    throw new TypeError(
      "chair(): vocabulary must be a non-empty list of object names, e.g. ['red circle', 'blue square']",
    );
  for (const [alias, canonical] of Object.entries(synonyms))
    if (!vocabulary.includes(canonical))
      throw new TypeError(`chair(): synonym '${alias}' maps to '${canonical}', which is not in the vocabulary`);
  const truthOf =
    options.objects ??
    ((row: FailureCase): readonly string[] | undefined => {
      for (const v of [row.meta["objects"], row.meta["scene_objects"], row.expected])
        if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
      return undefined;
    });
  return defineEvaluator({
    name: options.name ?? "chair",
    parameters: {
      vocabulary: [...vocabulary],
      synonyms: { ...synonyms },
      objects: options.objects ? "custom" : "meta",
    },
    revision: 1,
    check: ({ output, row }) => {
      const truth = truthOf(row);
      if (!truth)
        throw new Error(
          `chair(): case '${row.id}' has no object list (meta.objects, meta.scene_objects or an expected list)`,
        );
      const present = new Set(truth.map((t) => synonyms[t] ?? t));
      const mentions = mentionedObjects(asText(output), vocabulary, synonyms);
      const absent = mentions.filter((m) => !present.has(m));
      const score = mentions.length === 0 ? 1 : 1 - absent.length / mentions.length;
      return {
        passed: absent.length === 0,
        score,
        data: { mentioned: mentions.length, hallucinated: absent.length, objects: mentions, absent },
        ...(absent.length ? { reason: `mentions absent ${JSON.stringify(absent)}` } : {}),
      };
    },
    aggregate: chairMetrics,
  });
}
