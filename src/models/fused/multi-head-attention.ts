import { DTYPE } from "../onnx-read.ts";
import type { Emitter } from "../onnx-emit.ts";
import {
  appendCache,
  attend,
  causalAllowed,
  floatAttr,
  fromHeads,
  input,
  intAttr,
  namedInputs,
  output,
  range,
  scalarDim,
  toHeads,
  type Decomposition,
  type FusedContext,
} from "./core.ts";

/**
 * An additive mask from a key padding mask: `[B]` key lengths, or 1/0 masks
 * `[B, T]` / `[B, S, T]`, as `[B, 1, 1 or S, T]` with `filter` on masked keys.
 */
export function paddingMask(
  e: Emitter,
  mask: string,
  rank: number | undefined,
  keys: string,
  filter: number,
  like: string,
): string | { reason: string } {
  const fill = e.scalarLike(filter, like);
  const zero = e.scalarLike(0, like);
  if (rank === 1) {
    const lens = e.reshape(e.cast(mask, DTYPE.int64), [-1, 1, 1, 1]);
    const masked = e.one("Less", [lens, e.reshape(e.one("Add", [range(e, keys), e.ints([1], [])]), [1, 1, 1, -1])]);
    return e.one("Where", [masked, fill, zero]);
  }
  if (rank === 2 || rank === 3) {
    const shaped = rank === 2 ? e.unsqueeze(e.unsqueeze(mask, [1]), [1]) : e.unsqueeze(mask, [1]);
    const masked = e.one("Equal", [e.cast(shaped, DTYPE.int64), e.ints([0], [])]);
    return e.one("Where", [masked, fill, zero]);
  }
  return {
    reason:
      rank === undefined
        ? "the key padding mask's rank cannot be told from the graph"
        : `a rank-${rank} key padding mask is not one of the documented layouts`,
  };
}

/** MultiHeadAttention's inputs, in the order of the contrib-op documentation (8, 9: refused). */
const MHA_INPUTS = ["query", "key", "value", "bias", "keyPadding", "attentionBias", "pastKey", "pastValue"] as const;

/**
 * `com.microsoft.MultiHeadAttention` as standard ops: query `[B, S, D]` with
 * key/value `[B, L, D]`, packed QKV `[B, S, N, 3, h]`, packed KV
 * `[B, L, N, 2, h]`, or cross-attention on cached BNSH key/value
 * `[B, N, L, h]`; the projection bias, the past key/value concatenated
 * (BNSH), the key padding mask (`[B]` lengths, `[B, T]`, `[B, S, T]`),
 * `attention_bias`, `unidirectional` (causal) and `scale`. Refused, with the
 * reason: a shared past/present buffer, beam-search cache indirection, the QK output.
 *
 * @example
 * decomposeMultiHeadAttention({ node, shapes, opset: 17, e: new Emitter("evalrx/mha0", 17) })
 * // → { nodes: [...], variant: "separate Q/K/V, KV cache, causal", softmax: "…" }
 */
export function decomposeMultiHeadAttention(ctx: FusedContext): Decomposition {
  const { node, e, shapes } = ctx;
  e.dtype = ctx.elemTypeOf?.(node.inputs[0] ?? "");
  const heads = intAttr(node, "num_heads", 0);
  if (heads <= 0) return { reason: "num_heads must be positive" };
  if (input(node, 8)) return { reason: "not decomposed: past_sequence_length means a shared past/present buffer" };
  if (input(node, 9))
    return { reason: "not decomposed: cache_indirection (beam search) reorders the cache inside the op" };
  if (output(node, 3)) return { reason: "not decomposed: the graph reads the op's QK output" };
  const { query: q0, key, value, bias, keyPadding, attentionBias, pastKey, pastValue } = namedInputs(node, MHA_INPUTS);
  const query = q0!;
  if (!!pastKey !== !!pastValue) return { reason: "past_key and past_value must be given together" };
  const rank = (t: string | undefined) => (t ? shapes.ranks.get(t) : undefined);
  const qRank = rank(query);
  const kRank = rank(key);
  let layout: "separate" | "packed QKV" | "packed KV" | "cross BNSH";
  if (!key) layout = "packed QKV";
  else if (!value) layout = "packed KV";
  else if (kRank === 4) layout = "cross BNSH";
  else if (kRank === 3) layout = "separate";
  else
    return {
      reason: `not decomposed: the key's layout (3-D BSH or 4-D BNSH) cannot be told from the graph (rank ${kRank ?? "unknown"})`,
    };
  if (layout === "packed QKV" && qRank !== undefined && qRank !== 5)
    return { reason: `not decomposed: a query without key must be packed QKV [B, S, N, 3, h], got rank ${qRank}` };
  if (layout === "cross BNSH" && pastKey)
    return { reason: "not decomposed: a BNSH key is the cache itself, a past_key on top is not a documented layout" };

  // Bias [D_q + D_k + D_v]: one slice per projection (D_q from the query's width).
  const hidden = (x: string) => e.dim(x, 2);
  const biasParts = (qWidth: string, kWidth: string) => {
    const kEnd = e.one("Add", [qWidth, kWidth]);
    return [e.slice(bias!, [0], qWidth, [0]), e.slice(bias!, qWidth, kEnd, [0]), e.slice(bias!, kEnd, [2 ** 62], [0])];
  };
  let q: string;
  let k: string;
  let v: string;
  if (layout === "separate" || layout === "cross BNSH") {
    let qIn = query;
    let kIn = key!;
    let vIn = value!;
    if (bias) {
      const [bq, bk, bv] = biasParts(hidden(query), layout === "separate" ? hidden(key!) : hidden(query));
      qIn = e.one("Add", [query, bq!]);
      if (layout === "separate") {
        kIn = e.one("Add", [key!, bk!]);
        vIn = e.one("Add", [value!, bv!]);
      }
    }
    q = toHeads(e, qIn, heads);
    k = layout === "separate" ? toHeads(e, kIn, heads) : kIn;
    v = layout === "separate" ? toHeads(e, vIn, heads) : vIn;
  } else {
    // Packed [B, L, N, 3 or 2, h] → per part [B, N, L, h].
    const part = (packed: string, i: number) =>
      e.transpose(e.squeeze(e.slice(packed, [i], [i + 1], [3]), [3]), [0, 2, 1, 3]);
    const withBias = (x: string, b: string | undefined) => (b ? e.one("Add", [x, e.reshape(b, [heads, 1, -1])]) : x);
    const width = bias ? e.one("Div", [e.dim(bias, 0), [3]]) : undefined;
    const [bq, bk, bv] = bias ? biasParts(width!, width!) : [];
    if (layout === "packed QKV") {
      q = withBias(part(query, 0), bq);
      k = withBias(part(query, 1), bk);
      v = withBias(part(query, 2), bv);
    } else {
      q = toHeads(e, bias ? e.one("Add", [query, bq!]) : query, heads);
      k = withBias(part(key!, 0), bk);
      v = withBias(part(key!, 1), bv);
    }
  }
  const past = pastKey ? scalarDim(e, pastKey, 2) : e.ints([0], []);
  ({ k, v } = appendCache(
    e,
    k,
    v,
    { key: pastKey, value: pastValue },
    { key: output(node, 1), value: output(node, 2) },
  ));
  const filter = floatAttr(node, "mask_filter_value") ?? -10000;
  const add: string[] = [];
  if (keyPadding) {
    const mask = paddingMask(e, keyPadding, rank(keyPadding), scalarDim(e, k, 2), filter, q);
    if (typeof mask !== "string") return { reason: `not decomposed: ${mask.reason}` };
    add.push(mask);
  }
  if (attentionBias) add.push(attentionBias);
  const causal = intAttr(node, "unidirectional", 0) !== 0;
  const allowed = causal ? causalAllowed(e, scalarDim(e, q, 2), scalarDim(e, k, 2), past) : undefined;
  const scale = floatAttr(node, "scale");
  const { out, probs } = attend(e, q, k, v, {
    ...(scale ? { scale } : {}),
    add,
    ...(allowed ? { allowed, masked: filter } : {}),
  });
  fromHeads(e, out, output(node, 0));
  const variant = [
    layout === "separate"
      ? "separate Q/K/V"
      : layout === "cross BNSH"
        ? "cross-attention on cached BNSH key/value"
        : layout,
    bias ? "bias" : "",
    pastKey ? "KV cache" : "",
    causal ? "causal" : "",
    keyPadding ? "key padding mask" : "",
    attentionBias ? "attention_bias" : "",
  ].filter(Boolean);
  return { nodes: e.nodes, variant: `${variant.join(", ")}, ${heads} heads`, softmax: probs };
}
