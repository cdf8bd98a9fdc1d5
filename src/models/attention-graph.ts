/**
 * Finding attention probabilities in an ONNX graph by inspecting it, and
 * editing the graph to return them (the tap) or to take an additive bias on
 * the scores before the softmax (the attention-bias edit) — in the main
 * graph and inside `If` branches (a merged decoder's two branches give one
 * layer's attention each way), for 4-D `[batch, heads, q, k]` and batched
 * 3-D `[batch·heads, q, k]` attention.
 */
import { Emitter } from "./onnx-emit.ts";
import { inferRanks, type StaticShapes } from "./onnx-ranks.ts";
import {
  attribute,
  describeScope,
  DTYPE,
  readOnnxGraph,
  walkNodes,
  type GraphView,
  type OnnxGraph,
  type OnnxNode,
  type ScopeStep,
} from "./onnx-read.ts";
import { copyNode, encodeAttribute, encodeGraph, encodeModel, encodeValueInfo } from "./onnx-write.ts";

/** One place an attention softmax lies: which graph scope, which node, which tensors. */
export interface AttentionPlace {
  /** The subgraphs that hold it, outermost first (empty: the main graph). */
  readonly path: readonly ScopeStep[];
  /** The same in words: "main graph", "If 'optimum::if' then_branch". */
  readonly where: string;
  readonly node: string;
  /** The pre-softmax scores tensor (where a bias is added). */
  readonly scores: string;
  /** The attention probabilities tensor. */
  readonly probs: string;
  /** 4 for `[batch, heads, q, k]`, 3 for batched `[batch·heads, q, k]`; absent when the rank cannot be told. */
  readonly rank?: number;
  /** What made this softmax when not the export itself: an inlined function, a decomposed fused op. */
  readonly origin?: string;
}

/** One attention-probability tensor found in a graph: the Softmax over the key axis of one attention block. */
export interface AttentionSoftmax {
  /** Order among the attention softmaxes one forward runs = the layer index for a plain decoder stack. */
  readonly layer: number;
  /** The first place it lies (the `then` branch of a merged decoder). */
  readonly node: string;
  readonly scores: string;
  readonly probs: string;
  /** Every place this layer's softmax lies (a merged decoder has one per branch). */
  readonly places: readonly AttentionPlace[];
}

/** Attention a graph holds that cannot be read, and why. */
export interface UnreadableAttention {
  readonly where: string;
  readonly reason: string;
}

/** What attention a graph exposes. `softmaxes` is empty when attention is not readable in this export. */
export interface AttentionDiscovery {
  readonly softmaxes: readonly AttentionSoftmax[];
  /** Fused attention operators found anywhere (main graph, branches, functions), by op type and count. */
  readonly fused: Readonly<Record<string, number>>;
  /** Softmaxes found that cannot be tapped (inside a Loop body, `If` branches that disagree). */
  readonly untappable: readonly UnreadableAttention[];
  /** Why attention is not readable, when it is not. */
  readonly unreadable?: string;
}

export const FUSED_ATTENTION =
  /^(Attention|MultiHeadAttention|GroupQueryAttention|PackedAttention|PackedMultiHeadAttention|SparseAttention|DecoderMaskedMultiHeadAttention|DecoderMaskedSelfAttention|DecoderAttention|PagedAttention|LongformerAttention|QAttention|QOrderedAttention)$/;

/** Ops that may sit between Q·Kᵀ and the softmax (scale, mask, casts, reshapes) or between softmax and ·V. */
const PASS_THROUGH = new Set([
  "Add",
  "Sub",
  "Mul",
  "Div",
  "Where",
  "Cast",
  "CastLike",
  "Reshape",
  "Dropout",
  "Identity",
  "Max",
  "Min",
  "Clip",
  "Tanh",
  "Expand",
  "Transpose",
]);
const MATMUL = new Set(["MatMul", "Einsum", "FusedMatMul"]);

type Item =
  | { readonly kind: "softmax"; readonly index: number; readonly place: AttentionPlace }
  | {
      readonly kind: "if";
      readonly index: number;
      readonly node: OnnxNode;
      readonly then: Scope;
      readonly else: Scope;
      readonly count: number;
    };

interface Scope {
  readonly graph: GraphView;
  readonly path: readonly ScopeStep[];
  readonly items: readonly Item[];
  readonly count: number;
}

interface ScanContext {
  readonly opset: number;
  readonly origins: ReadonlyMap<string, string>;
  readonly untappable: UnreadableAttention[];
}

function isAttentionSoftmax(
  node: OnnxNode,
  shapes: StaticShapes,
  ctx: ScanContext,
  producer: ReadonlyMap<string, OnnxNode>,
  consumers: ReadonlyMap<string, OnnxNode[]>,
): number | false | undefined {
  if (node.opType !== "Softmax" || (node.domain !== "" && node.domain !== "ai.onnx")) return false;
  const scores = node.inputs[0];
  const probs = node.outputs[0];
  if (!scores || !probs) return false;
  const rank = shapes.ranks.get(scores);
  // Opset 13+ defaults to the last axis; before, to axis 1 (over a flattened tail: the last axis only for 2-D).
  const axis = node.intAttributes.get("axis") ?? (ctx.opset >= 13 ? -1 : 1);
  const lastAxis = axis === -1 || (rank !== undefined ? axis === rank - 1 : axis === 2 || axis === 3);
  if (!lastAxis || (rank !== undefined && rank < 3)) return false;
  const fedByMatMul = (tensor: string, depth: number): boolean => {
    const p = producer.get(tensor);
    if (!p) return false;
    if (MATMUL.has(p.opType)) return true;
    if (depth === 0 || !PASS_THROUGH.has(p.opType)) return false;
    return p.inputs.some((input) => input !== "" && fedByMatMul(input, depth - 1));
  };
  const feedsMatMul = (tensor: string, depth: number): boolean =>
    (consumers.get(tensor) ?? []).some(
      (c) =>
        MATMUL.has(c.opType) ||
        (depth > 0 && PASS_THROUGH.has(c.opType) && c.outputs.some((out) => feedsMatMul(out, depth - 1))),
    );
  if (!fedByMatMul(scores, 6) || !feedsMatMul(probs, 3)) return false;
  return rank;
}

function scanScope(graph: GraphView, path: readonly ScopeStep[], outer: StaticShapes | undefined, ctx: ScanContext) {
  const shapes = inferRanks(graph, outer);
  const producer = new Map<string, OnnxNode>();
  const consumers = new Map<string, OnnxNode[]>();
  for (const node of graph.nodes) {
    for (const out of node.outputs) producer.set(out, node);
    for (const input of node.inputs) {
      if (!consumers.has(input)) consumers.set(input, []);
      consumers.get(input)!.push(node);
    }
  }
  const items: Item[] = [];
  let count = 0;
  const where = describeScope(path);
  for (const node of graph.nodes) {
    const rank = isAttentionSoftmax(node, shapes, ctx, producer, consumers);
    if (rank !== false) {
      const origin = ctx.origins.get(node.name) ?? ctx.origins.get(node.outputs[0]!);
      items.push({
        kind: "softmax",
        index: node.index,
        place: {
          path,
          where,
          node: node.name,
          scores: node.inputs[0]!,
          probs: node.outputs[0]!,
          ...(rank !== undefined ? { rank } : {}),
          ...(origin ? { origin } : {}),
        },
      });
      count++;
      continue;
    }
    const graphs = node.attributes.filter((a) => a.graph);
    if (!graphs.length) continue;
    const step = (name: string): ScopeStep => ({ node: node.name, opType: node.opType, attribute: name });
    if (node.opType === "If") {
      const thenAttr = attribute(node, "then_branch")?.graph;
      const elseAttr = attribute(node, "else_branch")?.graph;
      if (!thenAttr || !elseAttr) continue;
      const thenScope = scanScope(thenAttr, [...path, step("then_branch")], shapes, ctx);
      const elseScope = scanScope(elseAttr, [...path, step("else_branch")], shapes, ctx);
      if (!thenScope.count && !elseScope.count) continue;
      if (thenScope.count !== elseScope.count) {
        ctx.untappable.push({
          where: `${describeScope(path)} › If '${node.name}'`,
          reason: `its branches hold different numbers of attention softmaxes (then ${thenScope.count}, else ${elseScope.count}), so one output per layer cannot be returned from both`,
        });
        continue;
      }
      items.push({ kind: "if", index: node.index, node, then: thenScope, else: elseScope, count: thenScope.count });
      count += thenScope.count;
    } else {
      for (const a of graphs) {
        const inner = scanScope(a.graph!, [...path, step(a.name)], shapes, ctx);
        if (inner.count)
          ctx.untappable.push({
            where: describeScope([...path, step(a.name)]),
            reason: `${inner.count} attention softmax(es) inside a ${node.opType} body, which runs them once per iteration: a graph output cannot return them`,
          });
      }
    }
  }
  return { graph, path, items, count };
}

function collect(scope: Scope, first: number, byLayer: AttentionPlace[][]): void {
  let layer = first;
  for (const item of scope.items) {
    if (item.kind === "softmax") (byLayer[layer++] ??= []).push(item.place);
    else {
      collect(item.then, layer, byLayer);
      collect(item.else, layer, byLayer);
      layer += item.count;
    }
  }
}

function scanModel(graph: OnnxGraph, origins: ReadonlyMap<string, string> = new Map()) {
  const ctx: ScanContext = { opset: graph.opset, origins, untappable: [] };
  const root = scanScope(graph, [], undefined, ctx);
  return { root, untappable: ctx.untappable };
}

/** Fused attention ops anywhere in a model (main graph, subgraphs, function bodies), by op type and count. */
export function fusedAttentionOps(graph: OnnxGraph): Record<string, number> {
  const fused: Record<string, number> = {};
  const count = (node: OnnxNode) => {
    if (FUSED_ATTENTION.test(node.opType) && node.domain === "com.microsoft")
      fused[node.opType] = (fused[node.opType] ?? 0) + 1;
  };
  for (const { node } of walkNodes(graph)) count(node);
  for (const fn of graph.functions.values()) for (const { node } of walkNodes(fn)) count(node);
  return fused;
}

/**
 * Finds the attention probabilities in a graph by inspecting it: every
 * Softmax over the last (key) axis that is fed by a MatMul (Q·Kᵀ, possibly
 * through scale / mask / cast ops) and that feeds a MatMul (·V) is one
 * attention block, in the order one forward runs them — in the main graph and
 * in both branches of an `If` (a merged decoder), for 4-D and batched 3-D
 * attention. Graphs whose attention is fused into one operator have no such
 * tensor: `unreadable` then says so (decompose them first, see `prepareAttention`).
 *
 * @example
 * discoverAttention(readOnnxGraph(bytes)).softmaxes.map((s) => s.probs) // → ["/layers.0/attn/Softmax_output_0", …]
 */
export function discoverAttention(
  graph: OnnxGraph,
  origins: ReadonlyMap<string, string> = new Map(),
): AttentionDiscovery {
  const { root, untappable } = scanModel(graph, origins);
  const fused = fusedAttentionOps(graph);
  const byLayer: AttentionPlace[][] = [];
  collect(root, 0, byLayer);
  const softmaxes = byLayer.map((places, layer) => ({
    layer,
    node: places[0]!.node,
    scores: places[0]!.scores,
    probs: places[0]!.probs,
    places,
  }));
  if (softmaxes.length > 0) return { softmaxes, fused, untappable };
  const fusedList = Object.entries(fused).map(([op, n]) => `${op} ×${n}`);
  const inFunctions = [...graph.functions.values()].some((fn) => fn.nodes.some((n) => n.opType === "Softmax"));
  return {
    softmaxes,
    fused,
    untappable,
    unreadable: fusedList.length
      ? `attention not readable in this export: attention is fused into ${fusedList.join(", ")} (no softmax tensor to read)`
      : untappable.length
        ? `attention not readable in this export: ${untappable.map((u) => `${u.where}: ${u.reason}`).join("; ")}`
        : inFunctions
          ? "attention not readable in this export: its softmaxes are inside ONNX local functions (inline them first)"
          : "attention not readable in this export: no Softmax over the key axis between two MatMuls was found",
  };
}

/** What `editAttention` should do to each discovered attention softmax. */
export interface AttentionEdit {
  /** Add each softmax output as a graph output named `attentions.{layer}` (skipped when that name is already an output). */
  readonly tap?: boolean;
  /**
   * Add a graph input `attention_bias.{layer}` (float32, broadcastable to the
   * scores [batch, heads, query, key], e.g. [1, heads, 1, key]) added to the
   * scores before the softmax. All zeros = the unchanged model.
   */
  readonly bias?: boolean;
  /** Heads per layer: batched 3-D attention `[batch·heads, q, k]` is then returned as `[batch, heads, q, k]`. */
  readonly heads?: number;
  /** Names of nodes made by an earlier rewrite, and what made them (for the places' `origin`). */
  readonly origins?: ReadonlyMap<string, string>;
}

/** The edited model bytes, and the names the edit added. */
export interface EditedGraph {
  readonly bytes: Uint8Array;
  readonly discovery: AttentionDiscovery;
  /** `attentions.{layer}` output names, in layer order (existing or added). */
  readonly attentionOutputs: readonly string[];
  /** `attention_bias.{layer}` input names, in layer order (when `bias` was asked). */
  readonly biasInputs: readonly string[];
}

function nodePayload(graph: GraphView, node: OnnxNode): Uint8Array {
  return graph.bytes.subarray(node.field.valueStart, node.field.valueEnd);
}

interface EditContext {
  readonly edit: AttentionEdit;
  readonly opset: number;
  readonly castLike: boolean;
  ifCount: number;
}

/** Edits one scope; returns its new node plan and the attention tensors it makes visible, in layer order. */
function editScope(
  scope: Scope,
  first: number,
  ctx: EditContext,
  tag = "",
): { plan: Map<number, Uint8Array[]>; tensors: string[] } {
  const { graph } = scope;
  const plan = new Map<number, Uint8Array[]>();
  const tensors: string[] = [];
  let layer = first;
  for (const item of scope.items) {
    if (item.kind === "softmax") {
      const { place } = item;
      const node = graph.nodes[item.index]!;
      const e = new Emitter(`evalrx/${tag}attention_${layer}`, ctx.opset);
      const before: Uint8Array[] = [];
      let softmax = nodePayload(graph, node);
      if (ctx.edit.bias) {
        let bias = `attention_bias.${layer}`;
        if (ctx.castLike) bias = e.one("CastLike", [bias, place.scores]);
        // Batched 3-D scores [batch·heads, q, k]: the [1, heads, 1, k] bias becomes [heads, 1, k].
        if (place.rank === 3)
          bias = e.reshape(bias, e.concat([[-1], e.slice(e.one("Shape", [bias]), [2], [4], [0])], 0));
        const biased = e.one("Add", [place.scores, bias]);
        before.push(...e.nodes.splice(0));
        softmax = copyNode(graph.bytes, node, { inputs: [biased, ...node.inputs.slice(1)] });
      }
      const after: Uint8Array[] = [];
      if (ctx.edit.tap) {
        let probs = place.probs;
        if (place.rank === 3 && ctx.edit.heads) {
          const tail = e.slice(e.one("Shape", [probs]), [1], [3], [0]);
          probs = e.reshape(probs, e.concat([[-1, ctx.edit.heads], tail], 0));
          after.push(...e.nodes.splice(0));
        }
        tensors.push(probs);
      }
      if (before.length || after.length || ctx.edit.bias) plan.set(item.index, [...before, softmax, ...after]);
      layer++;
    } else {
      const k = ctx.ifCount++;
      const thenEdit = editScope(item.then, layer, ctx, `${tag}if${k}_then/`);
      const elseEdit = editScope(item.else, layer, ctx, `${tag}if${k}_else/`);
      const addOutputs = (tensorsOf: string[]) => tensorsOf.map((t) => encodeValueInfo(t));
      const thenGraph = encodeGraph(item.then.graph, {
        nodes: thenEdit.plan,
        addOutputs: addOutputs(thenEdit.tensors),
      });
      const elseGraph = encodeGraph(item.else.graph, {
        nodes: elseEdit.plan,
        addOutputs: addOutputs(elseEdit.tensors),
      });
      const outs = thenEdit.tensors.map((_, i) => `evalrx/if_${k}/attention_${layer + i}`);
      plan.set(item.index, [
        copyNode(graph.bytes, item.node, {
          outputs: [...item.node.outputs, ...outs],
          attributes: new Map([
            ["then_branch", encodeAttribute("then_branch", { graph: thenGraph })],
            ["else_branch", encodeAttribute("else_branch", { graph: elseGraph })],
          ]),
        }),
      ]);
      tensors.push(...outs);
      layer += item.count;
    }
  }
  return { plan, tensors };
}

/**
 * Adds attention outputs and/or attention-bias inputs to an ONNX model by
 * splicing new fields into its protobuf bytes — in the main graph and inside
 * `If` branches; every other byte of the model (weights, metadata, fields
 * this code does not know) is kept as it was.
 * Throws "attention not readable in this export" when no attention softmax exists.
 *
 * @example
 * const { bytes: tapped, attentionOutputs } = editAttention(untapped, { tap: true });
 * // attentionOutputs → ["attentions.0", "attentions.1"]; a session on `tapped` returns them
 */
export function editAttention(bytes: Uint8Array, edit: AttentionEdit): EditedGraph {
  const graph = readOnnxGraph(bytes);
  const discovery = discoverAttention(graph, edit.origins);
  if (discovery.unreadable) throw new Error(discovery.unreadable);
  const { root } = scanModel(graph, edit.origins);
  const ctx: EditContext = { edit, opset: graph.opset, castLike: graph.opset >= 15, ifCount: 0 };
  const { plan, tensors } = editScope(root, 0, ctx);
  const existing = new Set(graph.outputs);
  const attentionOutputs: string[] = [];
  const newOutputs: Uint8Array[] = [];
  const identities: Uint8Array[] = [];
  if (edit.tap) {
    tensors.forEach((tensor, layer) => {
      const name = `attentions.${layer}`;
      if (existing.has(name) || existing.has(tensor)) {
        attentionOutputs.push(existing.has(name) ? name : tensor);
        return;
      }
      const e = new Emitter(`evalrx/tap_${layer}`, graph.opset);
      e.op("Identity", [tensor], {}, [name]);
      identities.push(...e.nodes);
      newOutputs.push(encodeValueInfo(name));
      attentionOutputs.push(name);
    });
  }
  // The taps read tensors every node before them made: they go after the last node.
  if (identities.length) {
    const last = graph.nodes.length - 1;
    plan.set(last, [...(plan.get(last) ?? [nodePayload(graph, graph.nodes[last]!)]), ...identities]);
  }
  const biasInputs = edit.bias ? discovery.softmaxes.map((s) => `attention_bias.${s.layer}`) : [];
  const graphBytes = encodeGraph(graph, {
    nodes: plan,
    addOutputs: newOutputs,
    addInputs: biasInputs.map((name) => encodeValueInfo(name, DTYPE.float)),
  });
  return { bytes: encodeModel(graph, graphBytes), discovery, attentionOutputs, biasInputs };
}
