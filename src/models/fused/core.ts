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

/** `[B, n, T, h]` → `[B, n·groups, T, h]`: each KV head serves `groups` query heads in a row (grouped-query attention). */
export function repeatKv(e: Emitter, x: string, groups: number): string {
  if (groups === 1) return x;
  const shape = e.one("Shape", [x]);
  const expanded = e.one("Expand", [
    e.unsqueeze(x, [2]),
    e.concat([e.slice(shape, [0], [2], [0]), [groups], e.slice(shape, [2], [4], [0])], 0),
  ]);
  return e.reshape(expanded, e.concat([e.slice(shape, [0], [1], [0]), [-1], e.slice(shape, [2], [4], [0])], 0));
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
  /** A scale tensor, or a number; default 1/√head_size. */
  readonly scale?: number;
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
  let scores = e.one("MatMul", [q, e.transpose(k, [0, 1, 3, 2])]);
  const scale = options.scale ? e.scalarLike(options.scale, q) : defaultScale(e, q);
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
  return { out: e.one("MatMul", [probs, v]), probs };
}

/**
 * Rotary position embedding on `x` `[B, N, S, h]`: the first `2·cache_width`
 * channels rotate by the cached cos/sin rows at `positions` (`[B or 1, S]`
 * int64), as ONNX Runtime's RotaryEmbedding: halves (`x₁·cos − x₂·sin`,
 * `x₂·cos + x₁·sin`) or interleaved pairs; the remaining channels pass.
 */
export function rotary(
  e: Emitter,
  x: string,
  cosCache: string,
  sinCache: string,
  positions: string,
  interleaved: boolean,
): string {
  const gather = (cache: string) => e.unsqueeze(e.one("Gather", [cache, positions], { axis: { int: 0 } }), [1]);
  // The caches are in the query's dtype already (the contrib-op spec ties them to T); CastLike only guards.
  const cos = e.opset >= 15 ? e.one("CastLike", [gather(cosCache), x]) : gather(cosCache);
  const sin = e.opset >= 15 ? e.one("CastLike", [gather(sinCache), x]) : gather(sinCache);
  const half = e.dim(cosCache, 1);
  const width = e.one("Mul", [half, [2]]);
  const big = [2 ** 62];
  const rot = e.slice(x, [0], width, [3]);
  const pass = e.slice(x, width, big, [3]);
  let rotated: string;
  if (!interleaved) {
    const x1 = e.slice(rot, [0], half, [3]);
    const x2 = e.slice(rot, half, big, [3]);
    const a = e.one("Sub", [e.one("Mul", [x1, cos]), e.one("Mul", [x2, sin])]);
    const b = e.one("Add", [e.one("Mul", [x2, cos]), e.one("Mul", [x1, sin])]);
    rotated = e.concat([a, b], 3);
  } else {
    const shape = e.one("Shape", [rot]);
    const pairs = e.reshape(rot, e.concat([e.slice(shape, [0], [3], [0]), [-1, 2]], 0));
    const even = e.slice(pairs, [0], [1], [4]);
    const odd = e.slice(pairs, [1], [2], [4]);
    const c = e.unsqueeze(cos, [4]);
    const s = e.unsqueeze(sin, [4]);
    const a = e.one("Sub", [e.one("Mul", [even, c]), e.one("Mul", [odd, s])]);
    const b = e.one("Add", [e.one("Mul", [odd, c]), e.one("Mul", [even, s])]);
    rotated = e.reshape(e.concat([a, b], 4), shape);
  }
  return e.concat([rotated, pass], 3);
}

/** An int attribute, or its default. */
export function intAttr(node: OnnxNode, name: string, fallback: number): number {
  return node.intAttributes.get(name) ?? fallback;
}

/** A float attribute, or undefined. */
export function floatAttr(node: OnnxNode, name: string): number | undefined {
  return node.attributes.find((a) => a.name === name)?.float;
}
