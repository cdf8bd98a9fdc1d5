/**
 * One answer, explained, inside the model worker (the playground's job): the
 * model answers, then one teacher-forced forward over prompt + answer reads
 * everything the page draws — each answer token's entropy, top-1 margin and
 * top-k, the image heatmaps per layer and head (the answer's attention, the
 * last prompt token's, and the rollout), the logit lens per layer — and the
 * full attention tensor stays here, handed out one layer × head matrix at a
 * time. The same question can be asked under an intervention (attention
 * reweighting, sink suppression, an attention-guided crop).
 */
import { cellCentre, zoom } from "../src/agent/crop.ts";
import type { AttentionBias, ImagePixels, Reduction, Trace, TraceTensor } from "../src/core/model.ts";
import type { OrtModel } from "../src/models/ort-model.ts";
import { toRgba } from "../src/models/image.ts";
import { logSoftmax, topK } from "../src/models/reductions.ts";

/** How the question is asked differently, beside the unmodified answer. */
export type Intervention =
  /** Adds `value` to the pre-softmax attention on every image token (all layers, or `layer` alone). */
  | { readonly kind: "reweight"; readonly value: number; readonly layer?: number }
  /** Lowers the attention on the first token (the sink) by `value`. */
  | { readonly kind: "sink"; readonly value: number }
  /** Zooms on the rollout's peak cell (a window of `fraction` of the image), scaled back up, and asks again. */
  | { readonly kind: "crop"; readonly fraction: number };

export interface ExplainRequest {
  readonly prompt: string;
  /** Encoded image bytes (PNG/JPEG) or decoded RGBA pixels. */
  readonly image?: Uint8Array | ImagePixels;
  readonly maxNewTokens?: number;
  readonly intervention?: Intervention;
  /** Alternatives shown per answer token (default 5). */
  readonly topK?: number;
}

/** One token of the answer, as the model produced it. */
export interface AnswerToken {
  /** Position in the sequence (prompt + answer). */
  readonly position: number;
  readonly text: string;
  /** Probability the model gave this token. */
  readonly prob: number;
  /** Entropy (nats) of the next-token distribution it was drawn from. */
  readonly entropy: number;
  /** Top-1 probability minus top-2: how decided the model was. */
  readonly margin: number;
  readonly top: readonly { readonly text: string; readonly prob: number }[];
}

/** One hidden state of the logit lens: the top next tokens read from it at the position that predicts the answer. */
export interface LensState {
  readonly state: string;
  readonly top: readonly { readonly text: string; readonly prob: number; readonly isAnswer: boolean }[];
}

export interface Explanation {
  /** Identifies the kept full attention (`attentionMatrix`). */
  readonly id: number;
  readonly answer: string;
  /** The intervention in words, when there was one. */
  readonly intervention?: string;
  readonly tokens: readonly string[];
  readonly promptLength: number;
  readonly imagePositions: readonly number[];
  readonly answerTokens: readonly AnswerToken[];
  readonly layers: number;
  readonly heads: number;
  readonly grid?: readonly [rows: number, cols: number];
  /** The answer's attention over the image cells, per layer × head: mean over the positions predicting each answer token. `[layers, heads, cells]`. */
  readonly answerMaps?: Float32Array;
  /** The last prompt token's attention over the image cells, per layer × head. `[layers, heads, cells]`. */
  readonly lastMaps?: Float32Array;
  /** Attention rollout from the last prompt token to the image cells. */
  readonly rollout?: Float32Array;
  readonly lens?: readonly LensState[];
  /** The image the model saw (the crop, under a crop), as RGBA pixels. */
  readonly image?: ImagePixels;
  /** What could not be read, and why (a capability the model lacks). */
  readonly missing: readonly string[];
}

/**
 * Each query row's attention over the image tokens, per layer × head,
 * averaged over `queries`: `[layers, heads, cells]` from a full attention
 * tensor `[layers, heads, T, T]`.
 *
 * @example imageMaps(full, [9, 10], imagePositions) // Float32Array(layers * heads * 36) for a 6×6 grid
 */
export function imageMaps(full: TraceTensor, queries: readonly number[], image: readonly number[]): Float32Array {
  const [layers, heads, T] = full.shape as [number, number, number, number];
  if (!queries.length) throw new RangeError("imageMaps(): no query position given");
  for (const q of [...queries, ...image])
    if (!Number.isInteger(q) || q < 0 || q >= T)
      throw new RangeError(`imageMaps(): position ${q} is outside a ${T}-token sequence`);
  const cells = image.length;
  const out = new Float32Array(layers * heads * cells);
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++) {
      const base = (l * heads + h) * T * T;
      const at = (l * heads + h) * cells;
      for (const q of queries) for (let i = 0; i < cells; i++) out[at + i]! += full.data[base + q * T + image[i]!]!;
      for (let i = 0; i < cells; i++) out[at + i]! /= queries.length;
    }
  return out;
}

/**
 * One layer × head of a full attention tensor: the `T × T` matrix (row =
 * query, column = key), copied out.
 *
 * @example attentionMatrix(full, 1, 0).length // T * T
 */
export function matrixOf(full: TraceTensor, layer: number, head: number): Float32Array {
  const [layers, heads, T] = full.shape as [number, number, number, number];
  if (!Number.isInteger(layer) || layer < 0 || layer >= layers)
    throw new RangeError(`attention matrix: layer ${layer} is not one of 0…${layers - 1}`);
  if (!Number.isInteger(head) || head < 0 || head >= heads)
    throw new RangeError(`attention matrix: head ${head} is not one of 0…${heads - 1}`);
  const start = (layer * heads + head) * T * T;
  return full.data.slice(start, start + T * T);
}

/**
 * Per answer token: its probability, the entropy of the distribution it came
 * from, the top-1 margin and the top `k`, from the logits at the positions
 * that predicted each answer token (`logits` is `[answer tokens, vocab]`).
 */
export function answerTokens(
  trace: Pick<Trace, "tokens" | "tokenIds" | "answerPositions">,
  logits: { readonly values: Float32Array; readonly vocab: number } | undefined,
  decode: (id: number) => string,
  k = 5,
): AnswerToken[] {
  return Array.from(trace.answerPositions, (position, i) => {
    const id = trace.tokenIds[position]!;
    const text = trace.tokens[position] ?? decode(id);
    if (!logits) return { position, text, prob: Number.NaN, entropy: Number.NaN, margin: Number.NaN, top: [] };
    const lp = logSoftmax(logits.values.subarray(i * logits.vocab, (i + 1) * logits.vocab));
    let entropy = 0;
    for (let v = 0; v < lp.length; v++) if (lp[v]! > -Infinity) entropy -= Math.exp(lp[v]!) * lp[v]!;
    const best = topK(lp, Math.max(2, k));
    const p1 = Math.exp(lp[best[0]!]!);
    const p2 = best[1] !== undefined ? Math.exp(lp[best[1]]!) : 0;
    return {
      position,
      text,
      prob: Math.exp(lp[id]!),
      entropy,
      margin: p1 - p2,
      top: best.slice(0, k).map((t) => ({ text: decode(t), prob: Math.exp(lp[t]!) })),
    };
  });
}

/** The logit lens `[states, k, 2]` (id, probability) as named states with decoded tokens. */
export function lensStates(lens: TraceTensor, decode: (id: number) => string, answerId?: number): LensState[] {
  const [states, k] = lens.shape as [number, number, number];
  return Array.from({ length: states }, (_, s) => ({
    state: s === 0 ? "embeddings" : `layer ${s}`,
    top: Array.from({ length: k }, (_, r) => {
      const id = lens.data[(s * k + r) * 2]!;
      return { text: decode(id), prob: lens.data[(s * k + r) * 2 + 1]!, isAnswer: id === answerId };
    }),
  }));
}

/** The intervention in words. */
export function describeIntervention(i: Intervention): string {
  switch (i.kind) {
    case "reweight":
      return `attention ${i.value >= 0 ? "+" : ""}${i.value} on every image token${i.layer !== undefined ? ` at layer ${i.layer + 1}` : ", every layer"} and head (pre-softmax)`;
    case "sink":
      return `sink suppression: −${i.value} on the first token's attention, every layer and head`;
    case "crop":
      return `attention-guided crop: a ${Math.round(i.fraction * 100)}% window centred on the rollout's peak cell, scaled back up`;
  }
}

function checkIntervention(i: Intervention, layers: number): void {
  if (i.kind === "crop") {
    if (!(i.fraction > 0 && i.fraction < 1))
      throw new RangeError(`crop: the window must be a share of the image in (0, 1), got ${i.fraction}`);
    return;
  }
  if (!Number.isFinite(i.value)) throw new RangeError(`${i.kind}: the amount must be a number, got ${String(i.value)}`);
  if (
    i.kind === "reweight" &&
    i.layer !== undefined &&
    !(Number.isInteger(i.layer) && i.layer >= 0 && i.layer < layers)
  )
    throw new RangeError(`reweight: layer ${i.layer + 1} is not one of 1…${layers}`);
}

/** Full attention tensors kept for `attentionMatrix`, by explanation id (the newest few). */
const kept = new Map<number, TraceTensor>();
let nextId = 1;
const KEEP = 4;

/** Asks, answers and reads one explanation with `model` (see the file's comment). */
export async function explain(model: OrtModel, request: ExplainRequest, signal?: AbortSignal): Promise<Explanation> {
  if (typeof request?.prompt !== "string" || !request.prompt.trim())
    throw new Error(
      "the question is empty: type one (an image model needs its image token, e.g. '<image> is there a cat ?')",
    );
  const caps = model.capabilities;
  const missing: string[] = [];
  const reductions: Reduction[] = [];
  const hasImage = request.image !== undefined && !!model.spec.image;
  if (caps.has("attention")) {
    reductions.push("fullAttention");
    if (hasImage) reductions.push("rollout");
  } else missing.push("attention: the model's graph gives no attention probabilities (no heatmaps, no matrix)");
  if (caps.has("logits")) reductions.push("tokenEntropy");
  else missing.push("logits: no token probabilities (no entropy, margin or top-k)");
  if (caps.has("hidden_states")) reductions.push("logitLens");
  else missing.push("hidden_states: no logit lens (the model exposes no hidden states or lm_head)");
  if (request.image !== undefined && !model.spec.image)
    missing.push(`image: ${model.spec.key} reads no images, so the question was asked without it`);
  let input = { prompt: request.prompt, ...(hasImage ? { image: request.image! } : {}) };
  let bias: AttentionBias | undefined;
  let image: ImagePixels | undefined = hasImage ? toRgba(request.image!) : undefined;
  const intervention = request.intervention;
  if (intervention) {
    checkIntervention(intervention, model.spec.layers);
    if (intervention.kind === "crop") {
      if (!image) throw new Error("crop: this question has no image to crop");
      if (!caps.has("attention")) throw new Error("crop: the model gives no attention to find where it looked");
      const look = await model.forward(input, { reductions: ["rollout"], ...(signal ? { signal } : {}) });
      const grid = look.reductions.rollout!;
      const [rows, cols] = grid.shape as [number, number];
      let peak = 0;
      for (let i = 1; i < grid.data.length; i++) if (grid.data[i]! > grid.data[peak]!) peak = i;
      const { cx, cy } = cellCentre(peak, rows, cols);
      image = zoom(image, cx, cy, intervention.fraction);
      input = { ...input, image };
    } else {
      if (!caps.has("attention_write"))
        throw new Error(
          `${intervention.kind}: the model exposes no attention_write input, so attention cannot be changed`,
        );
      bias =
        intervention.kind === "reweight"
          ? {
              positions: "image",
              value: intervention.value,
              ...(intervention.layer !== undefined ? { layers: [intervention.layer] } : {}),
            }
          : { positions: [0], value: -Math.abs(intervention.value) };
    }
  }
  const generation = await model.generateTokens(input, {
    maxNewTokens: request.maxNewTokens ?? 16,
    ...(bias ? { attentionBias: bias } : {}),
    ...(signal ? { signal } : {}),
  });
  const answer = generation.text;
  const answerIds = answer ? model.codec.encode(answer, false) : [];
  const promptLength = generation.promptLength;
  // The positions that predicted each answer token (the last prompt token predicts the first).
  const predicting = answerIds.map((_, i) => promptLength - 1 + i);
  const trace = await model.forward(input, {
    ...(answer ? { answer } : {}),
    reductions,
    ...(caps.has("logits") && predicting.length ? { logitsAt: predicting } : {}),
    ...(bias ? { attentionBias: bias } : {}),
    ...(signal ? { signal } : {}),
  });
  const decode = (id: number) => model.codec.token(id);
  const full = trace.reductions.fullAttention;
  const id = nextId++;
  if (full) {
    kept.set(id, full);
    for (const old of kept.keys()) if (kept.size > KEEP) kept.delete(old);
  }
  const imagePositions = Array.from(trace.imagePositions);
  const grid = model.spec.image?.grid;
  const withMaps = full && grid && imagePositions.length === grid[0] * grid[1];
  const lastPrompt = promptLength - 1;
  const firstAnswer = answerIds[0];
  return {
    id,
    answer,
    ...(intervention ? { intervention: describeIntervention(intervention) } : {}),
    tokens: trace.tokens,
    promptLength,
    imagePositions,
    answerTokens: answerTokens(trace, trace.logits, decode, request.topK ?? 5),
    layers: full ? full.shape[0]! : model.spec.layers,
    heads: full ? full.shape[1]! : model.spec.heads,
    ...(grid ? { grid } : {}),
    ...(withMaps
      ? {
          answerMaps: imageMaps(full, predicting.length ? predicting : [lastPrompt], imagePositions),
          lastMaps: imageMaps(full, [lastPrompt], imagePositions),
        }
      : {}),
    ...(trace.reductions.rollout ? { rollout: trace.reductions.rollout.data } : {}),
    ...(trace.reductions.logitLens ? { lens: lensStates(trace.reductions.logitLens, decode, firstAnswer) } : {}),
    ...(image ? { image } : {}),
    missing,
  };
}

/** One layer × head of a kept explanation's full attention (the playground's matrix). */
export function keptMatrix(id: number, layer: number, head: number): { size: number; data: Float32Array } {
  const full = kept.get(id);
  if (!full) throw new Error("that answer's attention is no longer kept here: ask the question again");
  return { size: full.shape[2]!, data: matrixOf(full, layer, head) };
}
