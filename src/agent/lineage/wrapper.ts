import { rewrite } from "../../analyzers/index.ts";
import type { CaptureOptions, Model } from "../../core/index.ts";
import { attentionBiasCandidate, candidateModel, ladder, type Candidate, type DecodeImage } from "../repair.ts";
import type { LineageRecord } from "./record.ts";

const BIAS = /^attention-bias:(image|sink):(-?\d+(?:\.\d+)?)$/;

/**
 * The ladder's candidate with this signature on this model, rebuilt exactly as
 * M5 ran it (the same code path, so a promoted wrapper is the validated repair).
 * Throws, naming the signatures this model can rebuild, when it is unknown here.
 *
 * @example candidateFor(model, "rewrite:context").name // "prompt rewrite 'context'"
 */
export function candidateFor(
  model: Model,
  signature: string,
  options: { readonly decodeImage?: DecodeImage } = {},
): Candidate {
  const bias = BIAS.exec(signature);
  if (bias) return attentionBiasCandidate("L3b", Number(bias[2]), bias[1] as "image" | "sink");
  const hasImages = model.spec.modalities.has("image");
  const { candidates } = ladder(model, {
    hasImages,
    ...(options.decodeImage ? { decodeImage: options.decodeImage } : {}),
  });
  const found = candidates.find((c) => c.signature === signature);
  if (!found)
    throw new Error(
      `repair '${signature}' cannot be applied to ${model.spec.key}: it rebuilds ${candidates.map((c) => `'${c.signature}'`).join(", ")} and attention-bias:<image|sink>:<value>` +
        (hasImages && !options.decodeImage ? " (image scaffolds need an image decoder)" : ""),
    );
  return found;
}

/** What a wrapper does to a forward (the white-box read): the same prompt rewrite or attention write as its generate. */
function forwardChange(signature: string): ((capture: CaptureOptions) => CaptureOptions) | "prompt" | undefined {
  const bias = BIAS.exec(signature);
  if (bias) {
    const value = Number(bias[2]);
    const positions = bias[1] === "image" ? ("image" as const) : [0];
    return (capture) => ({ ...capture, attentionBias: { positions, value } });
  }
  if (signature.startsWith("rewrite:")) return "prompt";
  return undefined;
}

/**
 * `base` with one promoted repair around it: `generate` runs the repair exactly
 * as M5 validated it; `forward` sees what the repaired model sees (the
 * rewritten prompt, the attention write) for L1 and L3b repairs, and the
 * unchanged model for scaffolds (which only call the model several times).
 *
 * @example (await wrapRepair(base, "rewrite:context", "tiny-vlm+rewrite-context")).spec.key // "tiny-vlm+rewrite-context"
 */
export function wrapRepair(
  base: Model,
  signature: string,
  id: string,
  options: { readonly decodeImage?: DecodeImage } = {},
): Model {
  const candidate = candidateFor(base, signature, options);
  const inner = candidateModel(base, candidate);
  const change = forwardChange(signature);
  return {
    spec: { ...base.spec, key: id },
    capabilities: base.capabilities,
    generate: inner.generate,
    forward: (input, capture = {}) => {
      if (change === "prompt") {
        const rw = rewrite(signature.slice("rewrite:".length));
        return base.forward({ ...input, prompt: rw.apply(input.prompt) }, capture);
      }
      return base.forward(input, change ? change(capture) : capture);
    },
    dispose: () => base.dispose(),
  };
}

/**
 * Loads a promoted model: its weights through `load` (any backend), then its
 * wrappers around them, innermost first. What M5 validated is what runs.
 *
 * @example
 * const model = await loadPromoted(record, (weights) => loadModel(weights), { decodeImage });
 * model.spec.key // "tiny-vlm+rewrite-context"
 */
export async function loadPromoted(
  record: LineageRecord,
  load: (weights: string) => Promise<Model>,
  options: { readonly decodeImage?: DecodeImage } = {},
): Promise<Model> {
  let model = await load(record.weights);
  try {
    record.wrappers.forEach((signature, i) => {
      const last = i === record.wrappers.length - 1;
      model = wrapRepair(model, signature, last ? record.id : `${model.spec.key}+${signature}`, options);
    });
  } catch (error) {
    await model.dispose();
    throw error;
  }
  if (record.wrappers.length) return model;
  const weights = model;
  // New weights and no wrapper: the same model under the promoted id (methods called on the loaded model itself).
  return {
    spec: { ...weights.spec, key: record.id },
    capabilities: weights.capabilities,
    generate: (input, o) => weights.generate(input, o),
    forward: (input, capture) => weights.forward(input, capture),
    dispose: () => weights.dispose(),
  };
}
