/**
 * Pieces shared by the decompositions of ONNX Runtime's fused attention ops
 * (`com.microsoft` Attention, MultiHeadAttention, GroupQueryAttention) into
 * standard ONNX ops: the unfused attention core, whose Softmax is then an
 * ordinary tensor the tap can return and the bias edit can reach, rotary
 * embedding, and the masks.
 */
import type { Emitter } from "../onnx-emit.ts";
import type { StaticShapes } from "../onnx-ranks.ts";
import { DTYPE, type OnnxNode } from "../onnx-read.ts";

/** What a decomposition may read about the node's graph. */
export interface FusedContext {
  readonly node: OnnxNode;
  readonly shapes: StaticShapes;
  readonly opset: number;
  /** Emits the replacement nodes, named under the fused node. */
  readonly e: Emitter;
  /**
   * The static width (last dim) of a tensor when the graph tells it: an
   * initializer's or a declared shape's last dim, or a projection's
   * (`MatMul(x, W)`, `+ bias`) from W's dims. Undefined when unknown.
   */
  readonly widthOf?: (tensor: string) => number | undefined;
  /** Static dims of an initializer or declared tensor. */
  readonly dimsOf?: (tensor: string) => readonly (number | string | undefined)[] | undefined;
  /** The element type of a tensor when the graph tells it (declared, an initializer's, a projection's weights'). */
  readonly elemTypeOf?: (tensor: string) => number | undefined;
  /**
   * Tensors one fused op computed that the next ones in the same graph can
   * reuse (rotary rows, masks: every layer of a decoder has the same), by key.
   */
  readonly shared?: Map<string, string>;
  /** Rotary factors already made in this graph scope, by caches and positions. */
  readonly rows?: Map<string, RotaryRows>;
}

/** A tensor computed once per graph scope under `key` (the first op emits it; later ops reuse its name). */
export function sharedTensor(ctx: FusedContext, key: string, make: () => string): string {
  const hit = ctx.shared?.get(key);
  if (hit) return hit;
  const made = make();
  ctx.shared?.set(key, made);
  return made;
}

/** A decomposition: the standard nodes that replace the fused node, or why it cannot be replaced. */
export type Decomposition =
  | { readonly nodes: readonly Uint8Array[]; readonly variant: string; readonly softmax: string }
  | { readonly reason: string };

/** The node's input `i`, or undefined when it is absent (missing or the empty name). */
export function input(node: OnnxNode, i: number): string | undefined {
  const name = node.inputs[i];
  return name ? name : undefined;
}

/**
 * The node's inputs by the names the contrib-op documentation gives them, in
 * order; an absent optional input is undefined.
 *
 * @example
 * namedInputs(node, ["query", "key", "value"]) // → { query: "q", key: undefined, value: undefined }
 */
export function namedInputs<const K extends string>(
  node: OnnxNode,
  names: readonly K[],
): Record<K, string | undefined> {
  return Object.fromEntries(names.map((n, i) => [n, input(node, i)])) as Record<K, string | undefined>;
}

/**
 * Appends the new keys/values `[B, n, S, h]` to the past (BNSH) and names the
 * results as the op's present outputs when the graph reads them; returns the
 * full keys and values.
 */
export function appendCache(
  e: Emitter,
  k: string,
  v: string,
  past: { key?: string | undefined; value?: string | undefined },
  present: { key?: string | undefined; value?: string | undefined },
): { k: string; v: string } {
  const join = (pastT: string | undefined, x: string, out: string | undefined) => {
    if (pastT) return e.op("Concat", [pastT, x], { axis: { int: 2 } }, out ? [out] : 1)[0]!;
    if (out) e.op("Identity", [x], {}, [out]);
    return x;
  };
  return { k: join(past.key, k, present.key), v: join(past.value, v, present.value) };
}

/** The node's output `i` when the graph uses it (present and named), else undefined. */
export function output(node: OnnxNode, i: number): string | undefined {
  const name = node.outputs[i];
  return name ? name : undefined;
}

/** `[B, S, N·h]` → `[B, N, S, h]` for `heads` heads. */
export function toHeads(e: Emitter, x: string, heads: number): string {
  return e.transpose(e.reshape(x, [0, 0, heads, -1]), [0, 2, 1, 3]);
}

/** `[B, N, S, h]` → `[B, S, N·h]`. */
export function fromHeads(e: Emitter, x: string, out?: string): string {
  const t = e.transpose(x, [0, 2, 1, 3]);
  return out ? e.op("Reshape", [t, [0, 0, -1]], {}, [out])[0]! : e.reshape(t, [0, 0, -1]);
}

/** A scalar int64 tensor: the size of `x`'s axis `axis`. */
export function scalarDim(e: Emitter, x: string, axis: number): string {
  return e.one("Gather", [e.one("Shape", [x]), e.ints([axis], [])], { axis: { int: 0 } });
}

/** `0, 1, …, n − 1` (int64) for a scalar int64 `n`. */
export function range(e: Emitter, n: string): string {
  return e.one("Range", [e.ints([0], []), n, e.ints([1], [])]);
}

/** `a ≤ b` elementwise (LessOrEqual from opset 12, `not (a > b)` before). */
export function lessOrEqual(e: Emitter, a: string, b: string): string {
  return e.opset >= 12 ? e.one("LessOrEqual", [a, b]) : e.one("Not", [e.one("Greater", [a, b])]);
}

/**
 * Which keys each query may see under a causal mask: `[S, T]` booleans, true
 * where key `j ≤ offset + i` (the query's absolute position), optionally also
 * `j > offset + i − window` (a local window: the `window` keys up to its own, as
 * ONNX Runtime's GroupQueryAttention counts `local_window_size`).
 */
export function causalAllowed(e: Emitter, queries: string, keys: string, offset: string, window?: number): string {
  const qpos = e.one("Add", [e.unsqueeze(range(e, queries), [1]), offset]);
  const kpos = e.unsqueeze(range(e, keys), [0]);
  let allowed = lessOrEqual(e, kpos, qpos);
  if (window !== undefined && window >= 0) {
    const reach = e.one("Add", [kpos, e.ints([window - 1], [])]);
    allowed = e.one("And", [allowed, lessOrEqual(e, qpos, reach)]);
  }
  return allowed;
}

/** The default attention scale 1/√h for the head size of `q` ([B, N, S, h]), in q's dtype. */
export function defaultScale(e: Emitter, q: string): string {
  const h = e.cast(e.dim(q, 3), DTYPE.float);
  const scale = e.one("Div", [e.floats([1]), e.one("Sqrt", [h])]);
  return e.opset >= 15 ? e.one("CastLike", [scale, q]) : scale;
}

/** What shapes the attention core's scores and probabilities. */
export interface CoreOptions {
  /** The scale; default 1/√head_size (a constant when `headSize` is known, else computed in the graph). */
  readonly scale?: number;
  readonly headSize?: number;
  /**
   * Query heads per KV head (grouped-query attention): the query is viewed as
   * `[B, N_kv, groups·S, h]` against the `[B, N_kv, T, h]` keys, so K/V are
   * never copied per query head; the scores are still `[B, N, S, T]`.
   */
  readonly groups?: number;
  /** Query heads (needed with `groups`). */
  readonly heads?: number;
  /** `softcap · tanh(scores / softcap)` before masking (Gemma-style), when > 0. */
  readonly softcap?: number;
  /** Additive terms broadcast onto the scores `[B, N, S, T]` (attention_bias, additive masks). */
  readonly add?: readonly string[];
  /** A boolean mask broadcast onto the scores: false keys get `masked` (default: the dtype's lowest). */
  readonly allowed?: string;
  readonly masked?: number;
}

/**
 * The unfused attention core on `[B, N, S, h]` query and `[B, N, T, h]`
 * key/value: `softmax(mask(q·kᵀ·scale + bias)) · v`, returning `[B, N, S, h_v]`
 * and the name of the probabilities tensor.
 */
export function attend(e: Emitter, q: string, k: string, v: string, options: CoreOptions = {}) {
  const groups = options.groups ?? 1;
  const grouped = groups > 1;
  // Reshapes with 0 copy the input's dim: [B, N, S, h] ↔ [B, N_kv, groups·S, h] (heads of a group are consecutive).
  const kt = e.transpose(k, [0, 1, 3, 2]);
  let scores: string;
  if (grouped) {
    const heads = options.heads!;
    const qg = e.reshape(q, [0, heads / groups, -1, 0]);
    scores = e.reshape(e.one("MatMul", [qg, kt]), [0, heads, -1, 0]);
  } else scores = e.one("MatMul", [q, kt]);
  const scale =
    options.scale !== undefined
      ? e.scalarLike(options.scale, q)
      : options.headSize
        ? e.scalarLike(1 / Math.sqrt(options.headSize), q)
        : defaultScale(e, q);
  scores = e.one("Mul", [scores, scale]);
  if (options.softcap && options.softcap > 0) {
    const cap = e.scalarLike(options.softcap, q);
    scores = e.one("Mul", [e.one("Tanh", [e.one("Div", [scores, cap])]), cap]);
  }
  for (const term of options.add ?? []) scores = e.one("Add", [scores, term]);
  if (options.allowed) {
    const masked = e.scalarLike(options.masked ?? -3.4028234663852886e38, q);
    scores = e.one("Where", [options.allowed, scores, masked]);
  }
  const probs = e.softmax(scores, 4);
  if (!grouped) return { out: e.one("MatMul", [probs, v]), probs };
  const heads = options.heads!;
  const pg = e.reshape(probs, [0, heads / groups, -1, 0]);
  return { out: e.reshape(e.one("MatMul", [pg, v]), [0, heads, -1, 0]), probs };
}

/**
 * Rotary position embedding on `x` `[B, N, S, h]`: the first `2·cache_width`
 * channels rotate by the cached cos/sin rows at `positions` (`[B or 1, S]`
 * int64), as ONNX Runtime's RotaryEmbedding: halves (`x₁·cos − x₂·sin`,
 * `x₂·cos + x₁·sin`) or interleaved pairs; the remaining channels pass.
 */
export function rotary(e: Emitter, x: string, rows: RotaryRows, interleaved: boolean, headSize?: number): string {
  const { cos, sin, half } = rows;
  const big = [2 ** 62];
  const whole = typeof half === "number" && headSize === 2 * half;
  const width = typeof half === "number" ? [2 * half] : e.one("Mul", [half, [2]]);
  const rot = whole ? x : e.slice(x, [0], width, [3]);
  // x·cos + swap(x)·sin, with cos = [c, c] and sin = [−s, s] laid out as the rotation pairs channels.
  let swapped: string;
  if (!interleaved) {
    const halfT = typeof half === "number" ? [half] : half;
    swapped = e.concat([e.slice(rot, halfT, big, [3]), e.slice(rot, [0], halfT, [3])], 3);
  } else {
    const pairs = e.reshape(rot, [0, 0, 0, -1, 2]);
    swapped = e.reshape(e.concat([e.slice(pairs, [1], [2], [4]), e.slice(pairs, [0], [1], [4])], 4), [0, 0, 0, -1]);
  }
  const rotated = e.one("Add", [e.one("Mul", [rot, cos]), e.one("Mul", [swapped, sin])]);
  return whole ? rotated : e.concat([rotated, e.slice(x, width, big, [3])], 3);
}

/** The cos/sin factors rotary embedding multiplies by, `[B or 1, 1, S, 2·half]`, and the half width. */
export interface RotaryRows {
  readonly cos: string;
  readonly sin: string;
  readonly half: number | string;
}

/**
 * The cos/sin factors of rotary embedding at `positions` (`[B or 1, S]`
 * int64), from caches `[max_len, half]`, laid out for `rotary`: halves
 * (`[c, c]`, `[−s, s]`) or interleaved pairs (`[c₀, c₀, c₁, c₁, …]`,
 * `[−s₀, s₀, −s₁, s₁, …]`). Made once per graph and shared by every layer.
 */
export function rotaryRows(
  e: Emitter,
  cosCache: string,
  sinCache: string,
  positions: string,
  like: string,
  interleaved: boolean,
  half?: number,
): RotaryRows {
  const gather = (cache: string) => e.unsqueeze(e.one("Gather", [cache, positions], { axis: { int: 0 } }), [1]);
  // The caches are in the query's dtype already (the contrib-op spec ties them to T); CastLike only guards.
  const cast = (t: string) => (e.opset >= 15 && e.dtype === undefined ? e.one("CastLike", [t, like]) : t);
  const c = cast(gather(cosCache));
  const s = cast(gather(sinCache));
  const negS = e.one("Neg", [s]);
  const join = (a: string, b: string) =>
    interleaved
      ? e.reshape(e.concat([e.unsqueeze(a, [4]), e.unsqueeze(b, [4])], 4), [0, 0, 0, -1])
      : e.concat([a, b], 3);
  return { cos: join(c, c), sin: join(negS, s), half: half ?? e.dim(cosCache, 1) };
}

/** An int attribute, or its default. */
export function intAttr(node: OnnxNode, name: string, fallback: number): number {
  return node.intAttributes.get(name) ?? fallback;
}

/** A float attribute, or undefined. */
export function floatAttr(node: OnnxNode, name: string): number | undefined {
  return node.attributes.find((a) => a.name === name)?.float;
}
