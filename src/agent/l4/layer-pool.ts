/**
 * What the layer adapter trains on, read through the model's own runtime: for
 * every case of the diagnosis-only pool, teacher-forced on its expected
 * answer, the input of the last decoder layer at every position
 * (`hiddenStates`), which no adapter on that layer changes, so it is read once.
 * Each case is also a check of `last-layer.ts` against onnxruntime: the
 * layer's log-probability of every answer token must equal the runtime's
 * (`tokenLogprob`) within `LAYER_CHECK_TOLERANCE`, or the pool is refused —
 * a decoder that computes something else than the layer written there is
 * never trained as if it did.
 */
import type { FailureCase, ImagePixels, Model, ModelInput } from "../../core/index.ts";
import { refuseUnfitPool } from "./head-features.ts";
import { lastLayerLoss, prepareCase, type PreparedCase } from "./last-layer.ts";
import type { LastLayer } from "./layer-weights.ts";

/** The largest |log p(answer token)| difference from onnxruntime the layer may show on a pool case. */
export const LAYER_CHECK_TOLERANCE = 1e-4;

export interface LayerPool {
  readonly cases: readonly PreparedCase[];
  readonly caseIds: readonly string[];
  /** Answer tokens over all cases (the training rows). */
  readonly rows: number;
  /** The largest |log p| difference between this layer and onnxruntime over the pool. */
  readonly maxError: number;
}

export interface LayerPoolOptions {
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  /** Ids of the sealed (and repair-split) cases: none may be in the pool. */
  readonly sealed: ReadonlySet<string>;
  readonly signal?: AbortSignal;
  readonly onCase?: (done: number, total: number) => void;
}

/**
 * The layer adapter's training cases: each pool case's last-layer input and the rows predicting its expected
 * answer's tokens, checked against the runtime. Refuses — before reading anything — a sealed case, a case
 * without an expected answer, and a model without hidden states.
 *
 * @example
 * const pool = await layerPool(model, explorationCases, readLastLayer(files), { images, sealed });
 * pool.maxError // ≤ 1e-4 (else it threw)
 */
export async function layerPool(
  model: Model,
  cases: readonly FailureCase[],
  last: LastLayer,
  o: LayerPoolOptions,
): Promise<LayerPool> {
  refuseUnfitPool(model, cases, o.sealed, "the layer adapter needs the last layer's input");
  const { weights: w, layer } = last;
  const out: PreparedCase[] = [];
  const ids: string[] = [];
  let rows = 0;
  let maxError = 0;
  for (const [i, c] of cases.entries()) {
    if (o.signal?.aborted) throw new Error("training cancelled");
    const image = c.input.image !== undefined ? await o.images(c.input.image, c) : undefined;
    const input: ModelInput = { prompt: c.input.prompt, ...(image ? { image } : {}) };
    const t = await model.forward(input, {
      answer: String(c.expected).trim(),
      reductions: ["hiddenStates", "tokenLogprob"],
    });
    const states = t.reductions.hiddenStates;
    const logprob = t.reductions.tokenLogprob;
    const T = t.tokenIds.length;
    if (!states || !logprob || states.shape[1] !== T || states.shape[2] !== w.dim || states.shape[0]! <= layer)
      throw new Error(
        `L4 layer adapter: ${model.spec.key} gave hidden states of shape [${states?.shape ?? "none"}] for case '${c.id}' (${T} tokens, layer ${layer} of width ${w.dim})`,
      );
    if (!t.answerPositions.length) throw new Error(`L4 training pool: case '${c.id}' gave no answer token`);
    const prepared = prepareCase(w, {
      length: T,
      x: states.data.slice(layer * T * w.dim, (layer + 1) * T * w.dim),
      queries: Int32Array.from(t.answerPositions, (p) => p - 1),
      targets: Int32Array.from(t.answerPositions, (p) => t.tokenIds[p]!),
    });
    const { logits } = lastLayerLoss(w, [prepared], [], false);
    t.answerPositions.forEach((p, k) => {
      const z = logits.subarray(k * w.vocab, (k + 1) * w.vocab);
      let max = -Infinity;
      for (const v of z) if (v > max) max = v;
      let sum = 0;
      for (const v of z) sum += Math.exp(v - max);
      const mine = z[t.tokenIds[p]!]! - max - Math.log(sum);
      maxError = Math.max(maxError, Math.abs(mine - logprob.data[p]!));
    });
    if (!(maxError <= LAYER_CHECK_TOLERANCE))
      throw new Error(
        `L4 layer adapter: on case '${c.id}' the last layer written in last-layer.ts gives log-probabilities ${maxError.toExponential(2)} away from ${model.spec.key}'s runtime (tolerance ${LAYER_CHECK_TOLERANCE}): this decoder does not compute the layer as assumed, so it is not trained`,
      );
    out.push(prepared);
    ids.push(c.id);
    rows += prepared.queries.length;
    o.onCase?.(i + 1, cases.length);
  }
  if (!rows) throw new Error("L4 training pool: no case gave an answer token to train on");
  return { cases: out, caseIds: ids, rows, maxError };
}
