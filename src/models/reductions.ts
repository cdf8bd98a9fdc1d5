import type { TraceTensor } from "../core/model.ts";

/**
 * Reductions of attention and logits, computed next to the tensors so only
 * small arrays leave the worker. Attention of one layer is `[heads, T, T]`
 * (batch 1, row = query position, column = key position, rows sum to 1).
 */
export interface AttentionStack {
  readonly layers: readonly Float32Array[];
  readonly heads: number;
  /** Sequence length T. */
  readonly length: number;
}

function tensor(data: Float32Array, shape: number[], axes: string[]): TraceTensor {
  return { data, shape, axes };
}

/** Applies `fn(row, layer, head)` to each query row in `queries`, averaging the per-(layer, head) results. */
function perLayerHead(att: AttentionStack, queries: ArrayLike<number>, fn: (row: Float32Array) => number): TraceTensor {
  const { heads, length: T } = att;
  const out = new Float32Array(att.layers.length * heads);
  att.layers.forEach((layer, l) => {
    for (let h = 0; h < heads; h++) {
      let sum = 0;
      for (let q = 0; q < queries.length; q++) {
        const start = (h * T + queries[q]!) * T;
        sum += fn(layer.subarray(start, start + T));
      }
      out[l * heads + h] = sum / queries.length;
    }
  });
  return tensor(out, [att.layers.length, heads], ["layer", "head"]);
}

/**
 * Per layer × head, the share of attention that the query positions put on
 * the image tokens (mean over queries of the summed probability on image keys).
 *
 * @example
 * imageAttentionShare(att, [40, 41], imagePositions).data[0] // → 0.62 (layer 0, head 0)
 */
export function imageAttentionShare(
  att: AttentionStack,
  queries: ArrayLike<number>,
  image: ArrayLike<number>,
): TraceTensor {
  return perLayerHead(att, queries, (row) => {
    let s = 0;
    for (let i = 0; i < image.length; i++) s += row[image[i]!]!;
    return s;
  });
}

/** Per layer × head, the mean entropy (nats) of the query rows' attention distributions. */
export function attentionEntropy(att: AttentionStack, queries: ArrayLike<number>): TraceTensor {
  return perLayerHead(att, queries, (row) => {
    let e = 0;
    for (let k = 0; k < row.length; k++) {
      const p = row[k]!;
      if (p > 0) e -= p * Math.log(p);
    }
    return e;
  });
}

/** Per layer × head, the mean attention the query rows put on the first token (the "attention sink"). */
export function sinkMass(att: AttentionStack, queries: ArrayLike<number>): TraceTensor {
  return perLayerHead(att, queries, (row) => row[0]!);
}

/**
 * Per layer, one query position's attention over the image grid (mean over
 * heads), laid out as `[layer, row, col]`: the overlay map.
 */
export function imageAttentionMap(
  att: AttentionStack,
  query: number,
  image: ArrayLike<number>,
  grid: readonly [number, number],
): TraceTensor {
  const { heads, length: T } = att;
  const cells = grid[0] * grid[1];
  if (image.length !== cells)
    throw new Error(`imageAttentionMap: ${image.length} image tokens do not fill a ${grid[0]}×${grid[1]} grid`);
  const out = new Float32Array(att.layers.length * cells);
  att.layers.forEach((layer, l) => {
    for (let h = 0; h < heads; h++) {
      const start = (h * T + query) * T;
      for (let i = 0; i < cells; i++) out[l * cells + i]! += layer[start + image[i]!]! / heads;
    }
  });
  return tensor(out, [att.layers.length, grid[0], grid[1]], ["layer", "row", "col"]);
}

/**
 * Attention rollout (Abnar & Zuidema 2020) from one query position to the
 * image grid: per layer A' = ½·mean-over-heads(A) + ½·I, rows renormalised,
 * multiplied from the last layer down; only the query's row is carried, so it
 * costs layers × T² instead of layers × T³.
 */
export function rollout(
  att: AttentionStack,
  query: number,
  image: ArrayLike<number>,
  grid: readonly [number, number],
): TraceTensor {
  const { heads, length: T } = att;
  let row = new Float64Array(T);
  let next = new Float64Array(T);
  const mixed = new Float64Array(T);
  row[query] = 1;
  for (let l = att.layers.length - 1; l >= 0; l--) {
    const layer = att.layers[l]!;
    next.fill(0);
    // Causal attention: row q only reaches keys ≤ q, and only rows ≤ query carry weight.
    for (let q = 0; q <= query; q++) {
      const weight = row[q]!;
      if (weight === 0) continue;
      // Row q of A': half the head-mean attention plus half the residual, normalised to sum 1.
      mixed.fill(0);
      for (let h = 0; h < heads; h++) {
        const start = (h * T + q) * T;
        for (let k = 0; k < T; k++) mixed[k]! += layer[start + k]!;
      }
      let total = 0;
      for (let k = 0; k < T; k++) {
        mixed[k] = 0.5 * (mixed[k]! / heads) + (k === q ? 0.5 : 0);
        total += mixed[k]!;
      }
      const scale = weight / total;
      for (let k = 0; k < T; k++) next[k]! += scale * mixed[k]!;
    }
    [row, next] = [next, row];
  }
  const out = new Float32Array(image.length);
  for (let i = 0; i < image.length; i++) out[i] = row[image[i]!]!;
  return tensor(out, [grid[0], grid[1]], ["row", "col"]);
}

/** Log-softmax of one logits row, in float64 for stable small probabilities. */
export function logSoftmax(logits: Float32Array): Float64Array {
  const logZ = logPartitionRow(logits, 0, logits.length);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! - logZ;
  return out;
}

function logPartitionRow(logits: Float32Array, start: number, end: number): number {
  let max = -Infinity;
  for (let i = start; i < end; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = start; i < end; i++) sum += Math.exp(logits[i]! - max);
  return max + Math.log(sum);
}

/** Per position, log Σ exp(logits): the normaliser both token reductions share. `logits` is `[T, vocab]`. */
export function logPartition(logits: Float32Array, vocab: number): Float64Array {
  const T = logits.length / vocab;
  const out = new Float64Array(T);
  for (let t = 0; t < T; t++) out[t] = logPartitionRow(logits, t * vocab, (t + 1) * vocab);
  return out;
}

/**
 * Per position t, the entropy (nats) of the next-token distribution predicted
 * at t. `logits` is `[T, vocab]`; `logZ` may be passed from `logPartition`.
 */
export function tokenEntropy(logits: Float32Array, vocab: number, logZ = logPartition(logits, vocab)): TraceTensor {
  const T = logZ.length;
  const out = new Float32Array(T);
  for (let t = 0; t < T; t++) {
    // H = log Z − Σ p·x, with p = exp(x − log Z).
    const z = logZ[t]!;
    let expected = 0;
    for (let i = t * vocab; i < (t + 1) * vocab; i++) {
      const x = logits[i]!;
      expected += Math.exp(x - z) * x;
    }
    out[t] = z - expected;
  }
  return tensor(out, [T], ["position"]);
}

/**
 * Per position t, the log-probability the model gave to the token at t when
 * predicting it from position t − 1 (position 0 has no prediction: NaN).
 */
export function tokenLogprob(
  logits: Float32Array,
  vocab: number,
  ids: ArrayLike<number>,
  logZ = logPartition(logits, vocab),
): TraceTensor {
  const T = ids.length;
  const out = new Float32Array(T);
  out[0] = NaN;
  for (let t = 1; t < T; t++) out[t] = logits[(t - 1) * vocab + ids[t]!]! - logZ[t - 1]!;
  return tensor(out, [T], ["position"]);
}

/**
 * Logit lens: for each hidden state (embeddings, then each layer's output),
 * the top-k next tokens after the model's own final norm and unembedding.
 * `logits` is `[states, vocab]`; the result is `[state, rank, 2]` holding
 * (token id, probability).
 */
export function logitLens(logits: Float32Array, vocab: number, k: number): TraceTensor {
  const states = logits.length / vocab;
  const out = new Float32Array(states * k * 2);
  for (let s = 0; s < states; s++) {
    const lp = logSoftmax(logits.subarray(s * vocab, (s + 1) * vocab));
    const order = topK(lp, k);
    order.forEach((id, r) => {
      out[(s * k + r) * 2] = id;
      out[(s * k + r) * 2 + 1] = Math.exp(lp[id]!);
    });
  }
  return tensor(out, [states, k, 2], ["state", "rank", "id|prob"]);
}

/** Indices of the k largest values, largest first (ties: lower index first). */
export function topK(values: ArrayLike<number>, k: number): number[] {
  const best: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (best.length === k && v <= values[best[k - 1]!]!) continue;
    let at = best.length;
    while (at > 0 && values[best[at - 1]!]! < v) at--;
    best.splice(at, 0, i);
    if (best.length > k) best.pop();
  }
  return best;
}

/** The full attention tensor `[layer, head, query, key]`, for the attention viewer (one case only). */
export function fullAttention(att: AttentionStack): TraceTensor {
  const size = att.heads * att.length * att.length;
  const out = new Float32Array(att.layers.length * size);
  att.layers.forEach((layer, l) => out.set(layer.subarray(0, size), l * size));
  return tensor(out, [att.layers.length, att.heads, att.length, att.length], ["layer", "head", "query", "key"]);
}
