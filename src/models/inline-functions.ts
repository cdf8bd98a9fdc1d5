/**
 * Inlining ONNX local functions: a node that calls a `FunctionProto` is
 * replaced by the function's body, its tensors renamed under the call, so the
 * softmaxes inside become tensors of the calling graph that a tap can return.
 * ONNX Runtime inlines functions itself when it loads a model, so the result
 * computes the same thing.
 */
import {
  functionKey,
  readOnnxGraph,
  type GraphView,
  type OnnxAttribute,
  type OnnxFunction,
  type OnnxGraph,
  type OnnxNode,
} from "./onnx-read.ts";
import { copyNode, encodeAttribute, encodeGraph, encodeModel } from "./onnx-write.ts";
import { concatBytes, readFields, stringField } from "./protobuf.ts";
import { FUSED_ATTENTION } from "./attention-graph.ts";

/** What inlining did. */
export interface InlineResult {
  readonly bytes: Uint8Array;
  /** Functions inlined, with how many calls each (`domain.name`). */
  readonly inlined: readonly { readonly function: string; readonly calls: number }[];
  /** Functions that hold attention but were left alone, and why. */
  readonly skipped: readonly { readonly function: string; readonly reason: string }[];
  /** New node name → what it came from ("function __main__.Attention, call 'Attention_0'"). */
  readonly origins: ReadonlyMap<string, string>;
}

function holdsAttention(fn: OnnxFunction, functions: ReadonlyMap<string, OnnxFunction>, seen = new Set<string>()) {
  const key = functionKey(fn.domain, fn.name);
  if (seen.has(key)) return false;
  seen.add(key);
  const visit = (nodes: readonly OnnxNode[]): boolean =>
    nodes.some((n) => {
      if (n.opType === "Softmax" || (n.domain === "com.microsoft" && FUSED_ATTENTION.test(n.opType))) return true;
      const callee = functions.get(functionKey(n.domain, n.opType));
      if (callee && holdsAttention(callee, functions, seen)) return true;
      return n.attributes.some((a) => a.graph && visit(a.graph.nodes));
    });
  return visit(fn.nodes);
}

/** An attribute payload under another name (a function body's attribute taking the caller's value). */
function renamedAttribute(bytes: Uint8Array, attr: OnnxAttribute, name: string): Uint8Array {
  const parts = [stringField(1, name)];
  for (const f of readFields(bytes, attr.field.valueStart, attr.field.valueEnd))
    if (f.field !== 1 && f.field !== 21) parts.push(bytes.subarray(f.start, f.end));
  return concatBytes(parts);
}

/** The names a graph defines itself (inputs, initializers, node outputs): everything else comes from outside. */
function localNames(graph: GraphView): Set<string> {
  const local = new Set<string>([...graph.inputs, ...graph.initializers.keys()]);
  for (const n of graph.nodes) for (const o of n.outputs) local.add(o);
  return local;
}

interface Ctx {
  readonly model: OnnxGraph;
  readonly targets: ReadonlySet<string>;
  readonly origins: Map<string, string>;
  readonly calls: Map<string, number>;
  count: number;
}

/** A subgraph's payload with its references to outer tensors renamed (its own names stay). */
function renameOuter(graph: GraphView, rename: (name: string) => string, ctx: Ctx): Uint8Array {
  const local = localNames(graph);
  const outer = (name: string) => (name === "" || local.has(name) ? name : rename(name));
  const plan = new Map<number, Uint8Array[]>();
  for (const node of graph.nodes) {
    const subgraphs = new Map<string, Uint8Array>();
    for (const a of node.attributes)
      if (a.graph) subgraphs.set(a.name, encodeAttribute(a.name, { graph: renameOuter(a.graph, outer, ctx) }));
    plan.set(node.index, [copyNode(graph.bytes, node, { inputs: node.inputs.map(outer), attributes: subgraphs })]);
  }
  const outputs = graph.outputs.map(outer);
  if (outputs.some((o, i) => o !== graph.outputs[i]))
    throw new Error(`inlining: a subgraph output names an outer tensor (${graph.outputs.join(", ")}); not supported`);
  return encodeGraph(graph, { nodes: plan });
}

/** The body of `fn` as nodes of the calling graph, for one call. */
function expand(
  fn: OnnxFunction,
  call: { inputs: readonly string[]; outputs: readonly string[]; attributes: readonly OnnxAttribute[]; name: string },
  ctx: Ctx,
): Uint8Array[] {
  const key = `${fn.domain}.${fn.name}`;
  const prefix = `${call.name || `call_${ctx.count}`}::${fn.name}/`;
  ctx.count++;
  const names = new Map<string, string>();
  fn.inputs.forEach((formal, i) => names.set(formal, call.inputs[i] ?? ""));
  fn.outputs.forEach((formal, i) => names.set(formal, call.outputs[i] || `${prefix}${formal}`));
  const rename = (name: string) => (name === "" ? "" : (names.get(name) ?? `${prefix}${name}`));
  const callAttrs = new Map(call.attributes.map((a) => [a.name, a]));
  const out: Uint8Array[] = [];
  for (const node of fn.nodes) {
    const attributes = new Map<string, Uint8Array | null>();
    const resolved: OnnxAttribute[] = [];
    for (const a of node.attributes) {
      if (a.refAttrName !== undefined) {
        const given = callAttrs.get(a.refAttrName) ?? fn.attributeDefaults.get(a.refAttrName);
        attributes.set(a.name, given ? renamedAttribute(fn.bytes, given, a.name) : null);
        if (given) resolved.push({ ...given, name: a.name });
      } else {
        if (a.graph) attributes.set(a.name, encodeAttribute(a.name, { graph: renameOuter(a.graph, rename, ctx) }));
        resolved.push(a);
      }
    }
    const inputs = node.inputs.map(rename);
    const outputs = node.outputs.map(rename);
    const callee = ctx.model.functions.get(functionKey(node.domain, node.opType));
    if (callee && ctx.targets.has(functionKey(callee.domain, callee.name))) {
      out.push(...expand(callee, { inputs, outputs, attributes: resolved, name: `${prefix}${node.name}` }, ctx));
      continue;
    }
    const name = `${prefix}${node.name || `${node.opType}_${node.index}`}`;
    ctx.origins.set(name, `function ${key}, inlined from the call '${call.name}'`);
    out.push(copyNode(fn.bytes, node, { inputs, outputs, name, attributes }));
  }
  return out;
}

function inlineScope(graph: GraphView, ctx: Ctx): Uint8Array | undefined {
  const plan = new Map<number, Uint8Array[]>();
  for (const node of graph.nodes) {
    const key = functionKey(node.domain, node.opType);
    const fn = ctx.model.functions.get(key);
    if (fn && ctx.targets.has(key)) {
      plan.set(node.index, expand(fn, node, ctx));
      const label = `${fn.domain}.${fn.name}`;
      ctx.calls.set(label, (ctx.calls.get(label) ?? 0) + 1);
      continue;
    }
    const subgraphs = new Map<string, Uint8Array>();
    for (const a of node.attributes) {
      if (!a.graph) continue;
      const inner = inlineScope(a.graph, ctx);
      if (inner) subgraphs.set(a.name, encodeAttribute(a.name, { graph: inner }));
    }
    if (subgraphs.size) plan.set(node.index, [copyNode(graph.bytes, node, { attributes: subgraphs })]);
  }
  return plan.size ? encodeGraph(graph, { nodes: plan }) : undefined;
}

/**
 * Inlines every local function that holds attention (a Softmax or a fused
 * attention op, directly or through functions it calls) at each call, in the
 * main graph and in subgraphs; functions without attention are left as they
 * are. A function whose opset differs from the model's is left alone (its ops
 * would be read under another version), with the reason.
 *
 * @example
 * const { bytes: flat, inlined } = inlineFunctions(bytes);
 * // inlined → [{ function: "__main__.Attention", calls: 2 }]; discoverAttention(readOnnxGraph(flat)) finds 2
 */
export function inlineFunctions(bytes: Uint8Array): InlineResult {
  const model = readOnnxGraph(bytes);
  const targets = new Set<string>();
  const skipped: { function: string; reason: string }[] = [];
  for (const [key, fn] of model.functions) {
    if (!holdsAttention(fn, model.functions)) continue;
    const fnOpset = fn.opsets.get("") ?? model.opset;
    if (fnOpset !== model.opset) {
      skipped.push({
        function: `${fn.domain}.${fn.name}`,
        reason: `its body imports ai.onnx opset ${fnOpset} but the model imports ${model.opset}`,
      });
      continue;
    }
    targets.add(key);
  }
  const origins = new Map<string, string>();
  if (!targets.size) return { bytes, inlined: [], skipped, origins };
  const ctx: Ctx = { model, targets, origins, calls: new Map(), count: 0 };
  const graph = inlineScope(model, ctx);
  const inlined = [...ctx.calls].map(([fn, calls]) => ({ function: fn, calls }));
  if (!graph) return { bytes, inlined, skipped, origins };
  // A skipped function may still call an inlined one: then every function stays in the model.
  const dropFunctions = skipped.length ? new Set<string>() : targets;
  return { bytes: encodeModel(model, graph, { dropFunctions }), inlined, skipped, origins };
}
