import { FUSED_ATTENTION } from "../attention-graph.ts";
import { Emitter } from "../onnx-emit.ts";
import { inferRanks, type StaticShapes } from "../onnx-ranks.ts";
import { describeScope, readOnnxGraph, type GraphView, type OnnxNode, type ScopeStep } from "../onnx-read.ts";
import { copyNode, encodeAttribute, encodeGraph, encodeModel } from "../onnx-write.ts";
import { decomposeAttention } from "./attention.ts";
import type { Decomposition, FusedContext, RotaryRows } from "./core.ts";
import { decomposeGroupQueryAttention } from "./group-query-attention.ts";
import { decomposeMultiHeadAttention } from "./multi-head-attention.ts";

/** One fused attention op met in a graph, and what became of it. */
export interface FusedOpReport {
  /** `GroupQueryAttention`, `MultiHeadAttention`, `Attention`, … */
  readonly op: string;
  readonly domain: string;
  readonly node: string;
  /** The graph scope in words ("main graph", "If 'optimum::if' then_branch"). */
  readonly where: string;
  /** True when it was rewritten into standard ops (its attention is then readable and writable). */
  readonly decomposed: boolean;
  /** What the op does that the rewrite covers ("packed QKV, rotary, KV cache, 8 query heads over 2 KV heads"). */
  readonly variant?: string;
  /** Why it was not decomposed. */
  readonly reason?: string;
}

const DECOMPOSERS: Record<string, (ctx: FusedContext) => Decomposition> = {
  Attention: decomposeAttention,
  MultiHeadAttention: decomposeMultiHeadAttention,
  GroupQueryAttention: decomposeGroupQueryAttention,
};

/** What decomposition did to a model. */
export interface DecomposeResult {
  readonly bytes: Uint8Array;
  readonly ops: readonly FusedOpReport[];
  /** Probabilities tensor of each new softmax → the op it came from (for the attention status). */
  readonly origins: ReadonlyMap<string, string>;
}

interface Ctx {
  readonly opset: number;
  readonly ops: FusedOpReport[];
  readonly origins: Map<string, string>;
  count: number;
}

/** Static dims and projection widths of a graph's tensors, from initializers and declared shapes. */
function staticWidths(graph: GraphView) {
  const producer = new Map<string, OnnxNode>();
  for (const n of graph.nodes) for (const o of n.outputs) producer.set(o, n);
  const dimsOf = (t: string) => graph.initializers.get(t)?.dims ?? graph.declared.get(t)?.dims;
  const widthOf = (t: string, depth = 3): number | undefined => {
    const last = dimsOf(t)?.at(-1);
    if (typeof last === "number") return last;
    const p = producer.get(t);
    if (!p || depth === 0) return undefined;
    if (p.opType === "MatMul") {
      const w = dimsOf(p.inputs[1] ?? "")?.at(-1);
      return typeof w === "number" ? w : undefined;
    }
    if (p.opType === "Add" || p.opType === "Cast" || p.opType === "Identity")
      return p.inputs.map((i) => widthOf(i, depth - 1)).find((w) => w !== undefined && w > 1);
    return undefined;
  };
  const elemTypeOf = (t: string, depth = 6): number | undefined => {
    const known = graph.initializers.get(t)?.elemType ?? graph.declared.get(t)?.elemType;
    if (known !== undefined) return known;
    const p = producer.get(t);
    if (!p || depth === 0) return undefined;
    if (p.opType === "Cast") return p.intAttributes.get("to");
    if (
      !/^(MatMul|Add|Sub|Mul|Div|Identity|Reshape|Transpose|LayerNormalization|SimplifiedLayerNormalization|SkipLayerNormalization|SkipSimplifiedLayerNormalization|Gather)$/.test(
        p.opType,
      )
    )
      return undefined;
    // Gather's data is input 0; for the rest any float input tells.
    const inputs = p.opType === "Gather" ? [p.inputs[0]!] : p.inputs;
    return inputs.map((i) => (i ? elemTypeOf(i, depth - 1) : undefined)).find((x) => x !== undefined);
  };
  return { dimsOf, widthOf: (t: string) => widthOf(t), elemTypeOf: (t: string) => elemTypeOf(t) };
}

function decomposeScope(graph: GraphView, path: readonly ScopeStep[], outer: StaticShapes | undefined, ctx: Ctx) {
  const shapes = inferRanks(graph, outer);
  const widths = staticWidths(graph);
  const shared = new Map<string, string>();
  const rows = new Map<string, RotaryRows>();
  const plan = new Map<number, Uint8Array[]>();
  const where = describeScope(path);
  for (const node of graph.nodes) {
    if (node.domain === "com.microsoft" && FUSED_ATTENTION.test(node.opType)) {
      const decompose = DECOMPOSERS[node.opType];
      const base = { op: node.opType, domain: node.domain, node: node.name, where };
      if (!decompose) {
        ctx.ops.push({
          ...base,
          decomposed: false,
          reason: `${node.opType} is not one this runtime decomposes (it decomposes Attention, MultiHeadAttention and GroupQueryAttention)`,
        });
        continue;
      }
      const e = new Emitter(`evalrx/${node.opType}_${ctx.count++}`, ctx.opset);
      const result = decompose({ node, shapes, opset: ctx.opset, e, shared, rows, ...widths });
      if ("reason" in result) {
        ctx.ops.push({ ...base, decomposed: false, reason: result.reason });
        continue;
      }
      plan.set(node.index, [...result.nodes]);
      ctx.origins.set(result.softmax, `decomposed ${node.opType} '${node.name}'`);
      ctx.ops.push({ ...base, decomposed: true, variant: result.variant });
      continue;
    }
    const subgraphs = new Map<string, Uint8Array>();
    for (const a of node.attributes) {
      if (!a.graph) continue;
      const inner = decomposeScope(
        a.graph,
        [...path, { node: node.name, opType: node.opType, attribute: a.name }],
        shapes,
        ctx,
      );
      if (inner) subgraphs.set(a.name, encodeAttribute(a.name, { graph: inner }));
    }
    if (subgraphs.size) plan.set(node.index, [copyNode(graph.bytes, node, { attributes: subgraphs })]);
  }
  return plan.size ? encodeGraph(graph, { nodes: plan }) : undefined;
}

/**
 * Rewrites ONNX Runtime's fused attention ops (`com.microsoft` Attention,
 * MultiHeadAttention, GroupQueryAttention), in the main graph and in
 * subgraphs, into standard ONNX ops computing the same outputs, so that each
 * has a Softmax the tap can return and the bias edit can reach. An op that
 * cannot be rewritten is kept, and its report says why — read from the
 * protobuf alone, before any session exists.
 *
 * @example
 * const { bytes: plain, ops } = decomposeFusedAttention(bytes);
 * // ops → [{ op: "GroupQueryAttention", node: "/layers.0/attn/GQA", decomposed: true, variant: "rotary, KV cache, …" }, …]
 */
export function decomposeFusedAttention(bytes: Uint8Array): DecomposeResult {
  const model = readOnnxGraph(bytes);
  const ctx: Ctx = { opset: model.opset, ops: [], origins: new Map(), count: 0 };
  const graph = decomposeScope(model, [], undefined, ctx);
  return { bytes: graph ? encodeModel(model, graph) : bytes, ops: ctx.ops, origins: ctx.origins };
}
