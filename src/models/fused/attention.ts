import { DTYPE } from "../onnx-read.ts";
import {
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
import { paddingMask } from "./multi-head-attention.ts";

/** Attention's inputs, in the order of the contrib-op documentation (6: refused). */
const ATTENTION_INPUTS = ["input", "weights", "bias", "maskIndex", "past", "attentionBias"] as const;

/**
 * `com.microsoft.Attention` as standard ops: the packed projection
 * `input · weights (+ bias)` split into Q, K, V (equal thirds, or
 * `qkv_hidden_sizes`), the past `[2, B, N, P, h]` concatenated and returned as
 * `present`, `mask_index` (`[B]` key lengths, `[2·B]` end/start positions,
 * raw `[B, T]` or `[B, S, T]`, or Megatron's `[B, 1, M, M]`), `attention_bias`,
 * `unidirectional` and `scale`. Refused, with the reason: rotary inside the op
 * and a shared past/present buffer.
 *
 * @example
 * decomposeAttention({ node, shapes, opset: 17, e: new Emitter("evalrx/att0", 17) })
 * // → { nodes: [...], variant: "packed QKV weights, bias, KV cache, causal, 2 heads", softmax: "…" }
 */
export function decomposeAttention(ctx: FusedContext): Decomposition {
  const { node, e, shapes } = ctx;
  e.dtype = ctx.elemTypeOf?.(node.inputs[0] ?? "");
  const heads = intAttr(node, "num_heads", 0);
  if (heads <= 0) return { reason: "num_heads must be positive" };
  if (intAttr(node, "do_rotary", 0))
    return { reason: "not decomposed: rotary embedding inside Attention (do_rotary) is not read by this runtime" };
  if (intAttr(node, "past_present_share_buffer", 0) || input(node, 6))
    return { reason: "not decomposed: past_present_share_buffer means a shared past/present buffer" };
  const { input: x, weights, bias, maskIndex, past, attentionBias } = namedInputs(node, ATTENTION_INPUTS);
  const sizes = node.attributes.find((a) => a.name === "qkv_hidden_sizes")?.ints;
  let projected = e.one("MatMul", [x!, weights!]);
  if (bias) projected = e.one("Add", [projected, bias]);
  let parts: string[];
  if (sizes) {
    if (sizes.length !== 3) return { reason: `qkv_hidden_sizes must have 3 entries, got ${sizes.length}` };
    const [dq, dk] = sizes as [number, number, number];
    parts = [
      e.slice(projected, [0], [dq], [2]),
      e.slice(projected, [dq], [dq + dk], [2]),
      e.slice(projected, [dq + dk], [2 ** 62], [2]),
    ];
  } else {
    const third = e.one("Div", [e.dim(projected, 2), [3]]);
    const twice = e.one("Mul", [third, [2]]);
    parts = [
      e.slice(projected, [0], third, [2]),
      e.slice(projected, third, twice, [2]),
      e.slice(projected, twice, [2 ** 62], [2]),
    ];
  }
  const q = toHeads(e, parts[0]!, heads);
  let k = toHeads(e, parts[1]!, heads);
  let v = toHeads(e, parts[2]!, heads);
  const P = past ? scalarDim(e, past, 3) : e.ints([0], []);
  if (past) {
    const pastPart = (i: number) => e.squeeze(e.slice(past, [i], [i + 1], [0]), [0]);
    k = e.concat([pastPart(0), k], 2);
    v = e.concat([pastPart(1), v], 2);
  }
  const present = output(node, 1);
  if (present) e.op("Concat", [e.unsqueeze(k, [0]), e.unsqueeze(v, [0])], { axis: { int: 0 } }, [present]);
  const S = scalarDim(e, q, 2);
  const T = scalarDim(e, k, 2);
  const filter = floatAttr(node, "mask_filter_value") ?? -10000;
  const add: string[] = [];
  if (maskIndex) {
    const rank = shapes.ranks.get(maskIndex);
    if (rank === 1) {
      // [B] key lengths (right padding) or [2·B] exclusive ends then inclusive starts (left padding).
      const B = scalarDim(e, q, 0);
      const mask = e.cast(maskIndex, DTYPE.int64);
      const ends = e.reshape(e.slice(mask, [0], e.unsqueeze(B, [0]), [0]), [-1, 1, 1, 1]);
      const padded = e.concat([mask, e.one("Mul", [mask, e.ints([0], [])])], 0);
      const starts = e.reshape(
        e.slice(padded, e.unsqueeze(B, [0]), e.unsqueeze(e.one("Mul", [B, e.ints([2], [])]), [0]), [0]),
        [-1, 1, 1, 1],
      );
      const j = e.reshape(range(e, T), [1, 1, 1, -1]);
      const outside = e.one("Or", [e.one("Less", [j, starts]), e.one("Not", [e.one("Less", [j, ends])])]);
      add.push(e.one("Where", [outside, e.scalarLike(filter, q), e.scalarLike(0, q)]));
    } else if (rank === 4) {
      // Megatron's [B, 1, M, M]: rows past..past+S, columns 0..T.
      const rows = e.slice(maskIndex, e.unsqueeze(P, [0]), e.unsqueeze(e.one("Add", [P, S]), [0]), [2]);
      const block = e.slice(rows, [0], e.unsqueeze(T, [0]), [3]);
      const masked = e.one("Equal", [e.cast(block, DTYPE.int64), e.ints([0], [])]);
      add.push(e.one("Where", [masked, e.scalarLike(filter, q), e.scalarLike(0, q)]));
    } else {
      const mask = paddingMask(e, maskIndex, rank, T, filter, q);
      if (typeof mask !== "string") return { reason: `not decomposed: mask_index: ${mask.reason}` };
      add.push(mask);
    }
  }
  if (attentionBias) add.push(attentionBias);
  const causal = intAttr(node, "unidirectional", 0) !== 0;
  const allowed = causal ? causalAllowed(e, S, T, P) : undefined;
  const scale = floatAttr(node, "scale");
  const { out, probs } = attend(e, q, k, v, {
    ...(scale ? { scale } : {}),
    add,
    ...(allowed ? { allowed, masked: filter } : {}),
  });
  fromHeads(e, out, output(node, 0));
  const variant = [
    "packed QKV weights",
    bias ? "bias" : "",
    sizes ? `qkv_hidden_sizes ${sizes.join("/")}` : "",
    past ? "KV cache" : "",
    causal ? "causal" : "",
    maskIndex ? `mask_index (rank ${shapes.ranks.get(maskIndex) ?? "?"})` : "",
    attentionBias ? "attention_bias" : "",
  ].filter(Boolean);
  return { nodes: e.nodes, variant: `${variant.join(", ")}, ${heads} heads`, softmax: probs };
}
