import { DTYPE } from "../onnx-read.ts";
import {
  appendCache,
  attend,
  causalAllowed,
  floatAttr,
  fromHeads,
  input,
  intAttr,
  namedInputs,
  lessOrEqual,
  output,
  range,
  rotary,
  rotaryRows,
  sharedTensor,
  scalarDim,
  type Decomposition,
  type FusedContext,
} from "./core.ts";

/** GroupQueryAttention's inputs, in the order of the contrib-op documentation. */
const GQA_INPUTS = [
  "query",
  "key",
  "value",
  "pastKey",
  "pastValue",
  "seqlensK",
  "totalLength",
  "cosCache",
  "sinCache",
  "positionIds",
  "attentionBias",
] as const;

/**
 * `com.microsoft.GroupQueryAttention` as standard ops: query/key/value
 * `[B, S, N·h]` (or one packed QKV `[B, S, (N + 2·Nkv)·h]`), optional rotary
 * embedding from `cos_cache`/`sin_cache` at ONNX Runtime's positions, the KV
 * cache concatenated on the past (`present = [past; new]`, BNSH), each KV
 * head shared by `N / Nkv` query heads, the causal mask (with a local window
 * when set) and the padding given by `seqlens_k`, `softcap`, and
 * `attention_bias`. Refused, with the reason: quantized caches, head sinks,
 * smooth softmax, Q/K norms, the windowed cache and the QK output.
 *
 * @example
 * decomposeGroupQueryAttention({ node, shapes, opset: 17, e: new Emitter("evalrx/gqa0", 17) })
 * // → { nodes: [...], variant: "rotary, KV cache, 4 query heads over 2 KV heads", softmax: "evalrx/gqa0/Softmax_…" }
 */
export function decomposeGroupQueryAttention(ctx: FusedContext): Decomposition {
  const { node, e } = ctx;
  e.dtype = ctx.elemTypeOf?.(node.inputs[0] ?? "");
  const heads = intAttr(node, "num_heads", 0);
  const kvHeads = intAttr(node, "kv_num_heads", 0);
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads !== 0)
    return {
      reason: `num_heads ${heads} and kv_num_heads ${kvHeads} must be positive, with kv_num_heads dividing num_heads`,
    };
  if (ctx.opset < 11) return { reason: `the model's opset ${ctx.opset} lacks Range (opset 11) for the causal mask` };
  const refuse: [boolean, string][] = [
    [intAttr(node, "smooth_softmax", 0) !== 0, "smooth_softmax adds a sink term to the softmax denominator"],
    [!!input(node, 11), "a head_sink input adds a per-head sink term to the softmax denominator"],
    [
      node.inputs.slice(12).some((i) => i),
      "the KV cache is quantized (k_scale/v_scale) or Q/K are RMS-normalized inside the op",
    ],
    [intAttr(node, "sliding_window_cache", 0) !== 0, "the sliding-window cache evicts keys inside the op"],
    [!!output(node, 3), "the graph reads the op's QK output"],
    [
      node.attributes.some((a) => /_quant_type$/.test(a.name) && a.string && a.string !== "NONE"),
      "the KV cache is quantized",
    ],
  ];
  for (const [bad, why] of refuse) if (bad) return { reason: `not decomposed: ${why}` };
  const {
    query,
    key,
    value,
    pastKey,
    pastValue,
    seqlensK,
    totalLength,
    cosCache,
    sinCache,
    positionIds,
    attentionBias,
  } = namedInputs(node, GQA_INPUTS);
  const doRotary = intAttr(node, "do_rotary", 0) !== 0;
  if (doRotary && (!cosCache || !sinCache)) return { reason: "do_rotary is set but cos_cache/sin_cache are missing" };
  if (!!pastKey !== !!pastValue) return { reason: "past_key and past_value must be given together" };
  if (!!key !== !!value) return { reason: "key and value must be given together (or neither, for packed QKV)" };
  const causal = intAttr(node, "causal", 1) !== 0;
  const window = intAttr(node, "local_window_size", -1);

  // The head size, when the projections' weights tell it: constant reshapes and scale instead of Shape ops.
  const width = ctx.widthOf?.(query!);
  const packedWidth = heads + (key ? 0 : 2 * kvHeads);
  const headSize = width !== undefined && width % packedWidth === 0 ? width / packedWidth : undefined;
  const h = headSize ?? -1;
  let q: string;
  let k: string;
  let v: string;
  if (key && value) {
    q = e.transpose(e.reshape(query!, [0, 0, heads, h]), [0, 2, 1, 3]);
    k = e.transpose(e.reshape(key, [0, 0, kvHeads, h]), [0, 2, 1, 3]);
    v = e.transpose(e.reshape(value, [0, 0, kvHeads, h]), [0, 2, 1, 3]);
  } else {
    // Packed QKV [B, S, (N + 2·Nkv)·h]: split per head block.
    const packed = e.transpose(e.reshape(query!, [0, 0, heads + 2 * kvHeads, h]), [0, 2, 1, 3]);
    q = e.slice(packed, [0], [heads], [1]);
    k = e.slice(packed, [heads], [heads + kvHeads], [1]);
    v = e.slice(packed, [heads + kvHeads], [heads + 2 * kvHeads], [1]);
  }
  // Every layer of a decoder reads the same lengths (seqlens_k, total_sequence_length): their positions,
  // rotary rows and masks are made once per graph and shared.
  const lengths = `${seqlensK ?? ""}|${totalLength ?? ""}|${pastKey ? "past" : "no past"}`;
  const S = sharedTensor(ctx, `S|${lengths}`, () => scalarDim(e, q, 2));
  const past = sharedTensor(ctx, `P|${lengths}`, () => (pastKey ? scalarDim(e, pastKey, 2) : e.ints([0], [])));
  if (doRotary) {
    const positions = sharedTensor(ctx, `positions|${lengths}|${positionIds ?? ""}`, () => {
      if (positionIds) return positionIds;
      // ONNX Runtime's positions: 0…S−1 on the first prompt, else seqlens_k + 1 − S + i per batch entry.
      const steps = e.unsqueeze(range(e, S), [0]);
      if (!seqlensK || !totalLength) return e.one("Add", [steps, past]);
      const lens = e.unsqueeze(e.cast(seqlensK, DTYPE.int64), [1]);
      const later = e.one("Add", [e.one("Sub", [e.one("Add", [lens, e.ints([1], [])]), S]), steps]);
      const first = e.one("Equal", [e.cast(totalLength, DTYPE.int64), S]);
      return e.one("Where", [first, steps, later]);
    });
    const cacheDims = ctx.dimsOf?.(cosCache!);
    const half = typeof cacheDims?.[1] === "number" ? cacheDims[1] : undefined;
    const interleaved = intAttr(node, "rotary_interleaved", 0) !== 0;
    const key = `rows|${cosCache}|${sinCache}|${positions}|${interleaved}`;
    let rows = ctx.rows?.get(key);
    if (!rows) {
      rows = rotaryRows(e, cosCache!, sinCache!, positions, q, interleaved, half);
      ctx.rows?.set(key, rows);
    }
    q = rotary(e, q, rows, interleaved, headSize);
    k = rotary(e, k, rows, interleaved, headSize);
  }
  ({ k, v } = appendCache(
    e,
    k,
    v,
    { key: pastKey, value: pastValue },
    { key: output(node, 1), value: output(node, 2) },
  ));
  const allowed = sharedTensor(ctx, `mask|${lengths}|${causal}|${window}`, () => {
    const T = e.one("Add", [S, past]);
    let mask: string | undefined;
    if (causal) mask = causalAllowed(e, S, T, past, window >= 0 ? window : undefined);
    if (seqlensK) {
      // Keys past a batch entry's length are padding: [B, 1, 1, T].
      const lens = e.reshape(e.cast(seqlensK, DTYPE.int64), [-1, 1, 1, 1]);
      const padding = lessOrEqual(e, e.reshape(range(e, T), [1, 1, 1, -1]), lens);
      mask = mask ? e.one("And", [mask, padding]) : padding;
    }
    return mask ?? "";
  });
  const groups = heads / kvHeads;
  const softcap = floatAttr(node, "softcap");
  const scale = floatAttr(node, "scale");
  const { out, probs } = attend(e, q, k, v, {
    ...(scale ? { scale } : {}),
    ...(headSize ? { headSize } : {}),
    ...(softcap ? { softcap } : {}),
    ...(attentionBias ? { add: [attentionBias] } : {}),
    ...(allowed ? { allowed } : {}),
    groups,
    heads,
  });
  fromHeads(e, out, output(node, 0));
  const variant = [
    key ? "separate Q/K/V" : "packed QKV",
    doRotary ? `rotary${intAttr(node, "rotary_interleaved", 0) ? " (interleaved)" : ""}` : "",
    pastKey ? "KV cache" : "",
    groups > 1 ? `${heads} query heads over ${kvHeads} KV heads` : `${heads} heads`,
    window >= 0 ? `local window ${window}` : "",
    softcap ? `softcap ${softcap}` : "",
    attentionBias ? "attention_bias" : "",
  ].filter(Boolean);
  return { nodes: e.nodes, variant: variant.join(", "), softmax: probs };
}
