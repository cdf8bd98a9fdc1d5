import { CAPABILITIES } from "../../../core/capability.ts";
import type { ModelSpec } from "../../../core/model.ts";
import { count } from "../../../figures/format.ts";

/** The parts of a spec a card shows, whichever form it comes in (sets in a status, arrays in JSON). */
export type SpecLike = Pick<
  ModelSpec,
  "family" | "layers" | "heads" | "kvHeads" | "hiddenSize" | "vocabSize" | "contextLength" | "image"
> & { readonly modalities: Iterable<string> };

/**
 * A spec as label/value rows for a card.
 *
 * @example specRows(spec)[0] // { label: "family", value: "llava" }
 */
export function specRows(spec: SpecLike): { label: string; value: string }[] {
  const rows = [
    { label: "family", value: spec.family },
    { label: "modalities", value: [...spec.modalities].join(", ") },
    { label: "layers", value: count(spec.layers) },
    { label: "heads", value: spec.kvHeads !== spec.heads ? `${spec.heads} (${spec.kvHeads} KV)` : count(spec.heads) },
    { label: "hidden size", value: count(spec.hiddenSize) },
    { label: "vocabulary", value: count(spec.vocabSize) },
    { label: "context", value: `${count(spec.contextLength)} tokens` },
  ];
  if (spec.image)
    rows.push({
      label: "image grid",
      value: `${spec.image.grid.join(" × ")} tokens (${spec.image.size.join(" × ")} px)`,
    });
  return rows;
}

/** Human names of the capabilities. */
const NAMES: Record<string, string> = {
  generate: "answers",
  logits: "logits",
  attention: "attention",
  hidden_states: "hidden states",
  attention_write: "attention edits",
  image: "images",
};

/**
 * What a model gives and lacks, in words, in the catalogue's order.
 *
 * @example capabilityWords(["generate", "image"]) // { gives: ["answers", "images"], lacks: ["logits", "attention", "hidden states", "attention edits"] }
 */
export function capabilityWords(given: Iterable<string>): { gives: string[]; lacks: string[] } {
  const have = new Set(given);
  const gives: string[] = [];
  const lacks: string[] = [];
  for (const c of CAPABILITIES) (have.has(c) ? gives : lacks).push(NAMES[c] ?? c);
  return { gives, lacks };
}
