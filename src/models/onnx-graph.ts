import {
  bytesField,
  concatBytes,
  fieldString,
  readFields,
  readSignedVarint,
  stringField,
  varintField,
  type Field,
} from "./protobuf.ts";

/*
 * ONNX field numbers (onnx.proto). Only the ones we read or write.
 * ModelProto: graph = 7, opset_import = 8.  OperatorSetIdProto: domain = 1, version = 2.
 * GraphProto: node = 1, input = 11, output = 12, value_info = 13.
 * NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7.
 * AttributeProto: name = 1, i = 3.   ValueInfoProto: name = 1, type = 2.
 * TypeProto: tensor_type = 1.        TypeProto.Tensor: elem_type = 1.
 */
const MODEL_GRAPH = 7;
const MODEL_OPSET = 8;
const GRAPH_NODE = 1;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_NAME = 3;
const NODE_OP = 4;
const NODE_ATTRIBUTE = 5;
const NODE_DOMAIN = 7;
const FLOAT = 1;

/** One node of an ONNX graph, as read from the bytes (attributes: only integer ones are decoded). */
export interface OnnxNode {
  readonly index: number;
  readonly name: string;
  readonly opType: string;
  readonly domain: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly intAttributes: ReadonlyMap<string, number>;
  /** The node's field inside the graph message. */
  readonly field: Field;
}

/** What an ONNX model's main graph holds, read without decoding initializers. */
export interface OnnxGraph {
  readonly bytes: Uint8Array;
  readonly modelFields: readonly Field[];
  readonly graphField: Field;
  readonly graphFields: readonly Field[];
  readonly nodes: readonly OnnxNode[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** Opset version of the default (`ai.onnx`) domain. */
  readonly opset: number;
}

function readNode(bytes: Uint8Array, field: Field, index: number): OnnxNode {
  const inputs: string[] = [];
  const outputs: string[] = [];
  const intAttributes = new Map<string, number>();
  let name = "";
  let opType = "";
  let domain = "";
  for (const f of readFields(bytes, field.valueStart, field.valueEnd)) {
    if (f.field === NODE_INPUT) inputs.push(fieldString(bytes, f));
    else if (f.field === NODE_OUTPUT) outputs.push(fieldString(bytes, f));
    else if (f.field === NODE_NAME) name = fieldString(bytes, f);
    else if (f.field === NODE_OP) opType = fieldString(bytes, f);
    else if (f.field === NODE_DOMAIN) domain = fieldString(bytes, f);
    else if (f.field === NODE_ATTRIBUTE) {
      let attrName = "";
      let intValue: number | undefined;
      for (const a of readFields(bytes, f.valueStart, f.valueEnd)) {
        if (a.field === 1) attrName = fieldString(bytes, a);
        else if (a.field === 3 && a.wire === 0) intValue = readSignedVarint(bytes, a.valueStart)[0];
      }
      if (intValue !== undefined) intAttributes.set(attrName, intValue);
    }
  }
  return { index, name, opType, domain, inputs, outputs, intAttributes, field };
}

function valueInfoName(bytes: Uint8Array, field: Field): string {
  for (const f of readFields(bytes, field.valueStart, field.valueEnd)) if (f.field === 1) return fieldString(bytes, f);
  return "";
}

/**
 * Reads an ONNX model's main graph: its nodes (in file order), inputs and
 * outputs, without copying or decoding the weights.
 * Throws a readable error for bytes that are not an ONNX model (corrupt or truncated).
 *
 * @example
 * readOnnxGraph(bytes).outputs // → ["logits", "present.0.key", …]
 */
export function readOnnxGraph(bytes: Uint8Array): OnnxGraph {
  let modelFields: Field[];
  try {
    modelFields = readFields(bytes);
  } catch (error) {
    throw new Error(`not a readable ONNX model (corrupt or truncated file): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const graphField = modelFields.find((f) => f.field === MODEL_GRAPH && f.wire === 2);
  if (!graphField) throw new Error("not an ONNX model: the file has no graph (corrupt, truncated, or another format)");
  let opset = 0;
  for (const f of modelFields) {
    if (f.field !== MODEL_OPSET || f.wire !== 2) continue;
    let domain = "";
    let version = 0;
    for (const o of readFields(bytes, f.valueStart, f.valueEnd)) {
      if (o.field === 1) domain = fieldString(bytes, o);
      else if (o.field === 2) version = o.varint ?? 0;
    }
    if (domain === "" || domain === "ai.onnx") opset = version;
  }
  const graphFields = readFields(bytes, graphField.valueStart, graphField.valueEnd);
  const nodes: OnnxNode[] = [];
  const inputs: string[] = [];
  const outputs: string[] = [];
  for (const f of graphFields) {
    if (f.field === GRAPH_NODE) nodes.push(readNode(bytes, f, nodes.length));
    else if (f.field === GRAPH_INPUT) inputs.push(valueInfoName(bytes, f));
    else if (f.field === GRAPH_OUTPUT) outputs.push(valueInfoName(bytes, f));
  }
  return { bytes, modelFields, graphField, graphFields, nodes, inputs, outputs, opset };
}

/** One attention-probability tensor found in a graph: the Softmax over the key axis of one attention block. */
export interface AttentionSoftmax {
  /** Order among the attention softmaxes in the graph = the layer index for a plain decoder stack. */
  readonly layer: number;
  readonly node: string;
  /** The pre-softmax scores tensor (where a bias is added). */
  readonly scores: string;
  /** The attention probabilities tensor. */
  readonly probs: string;
}

/** What attention a graph exposes. `softmaxes` is empty when attention is not readable in this export. */
export interface AttentionDiscovery {
  readonly softmaxes: readonly AttentionSoftmax[];
  /** Fused attention operators found (e.g. `GroupQueryAttention`), by op type and count. */
  readonly fused: Readonly<Record<string, number>>;
  /** Why attention is not readable, when it is not. */
  readonly unreadable?: string;
}

const FUSED_ATTENTION =
  /^(Attention|MultiHeadAttention|GroupQueryAttention|PackedAttention|PackedMultiHeadAttention|SparseAttention|DecoderMaskedMultiHeadAttention|DecoderMaskedSelfAttention|DecoderAttention|PagedAttention)$/;
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
]);

/**
 * Finds the attention probabilities in a graph by inspecting it: every
 * Softmax over the last (key) axis that is fed by a MatMul (Q·Kᵀ, possibly
 * through scale / mask / cast ops) and that feeds a MatMul (·V) is one
 * attention block, in graph order. Graphs whose attention is fused into one
 * operator have no such tensor: `unreadable` then says so.
 *
 * @example
 * discoverAttention(readOnnxGraph(bytes)).softmaxes.map((s) => s.probs) // → ["/layers.0/attn/Softmax_output_0", …]
 */
export function discoverAttention(graph: OnnxGraph): AttentionDiscovery {
  const producer = new Map<string, OnnxNode>();
  const consumers = new Map<string, OnnxNode[]>();
  const fused: Record<string, number> = {};
  for (const node of graph.nodes) {
    for (const out of node.outputs) producer.set(out, node);
    for (const input of node.inputs) {
      if (!consumers.has(input)) consumers.set(input, []);
      consumers.get(input)!.push(node);
    }
    if (FUSED_ATTENTION.test(node.opType)) fused[node.opType] = (fused[node.opType] ?? 0) + 1;
  }
  const fedByMatMul = (tensor: string, depth: number): boolean => {
    const node = producer.get(tensor);
    if (!node) return false;
    if (node.opType === "MatMul" || node.opType === "Einsum") return true;
    if (depth === 0 || !PASS_THROUGH.has(node.opType)) return false;
    return node.inputs.some((input) => input !== "" && fedByMatMul(input, depth - 1));
  };
  const feedsMatMul = (tensor: string, depth: number): boolean =>
    (consumers.get(tensor) ?? []).some(
      (node) =>
        node.opType === "MatMul" ||
        node.opType === "Einsum" ||
        (depth > 0 && PASS_THROUGH.has(node.opType) && node.outputs.some((out) => feedsMatMul(out, depth - 1))),
    );
  const softmaxes: AttentionSoftmax[] = [];
  for (const node of graph.nodes) {
    if (node.opType !== "Softmax" || (node.domain !== "" && node.domain !== "ai.onnx")) continue;
    // Opset 13+ defaults to the last axis; attention scores are [batch, heads, query, key].
    const axis = node.intAttributes.get("axis") ?? (graph.opset >= 13 ? -1 : 1);
    if (axis !== -1 && axis !== 3) continue;
    const scores = node.inputs[0];
    const probs = node.outputs[0];
    if (!scores || !probs || !fedByMatMul(scores, 6) || !feedsMatMul(probs, 3)) continue;
    softmaxes.push({ layer: softmaxes.length, node: node.name, scores, probs });
  }
  if (softmaxes.length > 0) return { softmaxes, fused };
  const fusedList = Object.entries(fused).map(([op, n]) => `${op} ×${n}`);
  return {
    softmaxes,
    fused,
    unreadable: fusedList.length
      ? `attention not readable in this export: attention is fused into ${fusedList.join(", ")} (no softmax tensor to read)`
      : "attention not readable in this export: no Softmax over the key axis between two MatMuls was found",
  };
}

function valueInfo(name: string, elemType?: number): Uint8Array {
  const parts = [stringField(1, name)];
  // TypeProto { tensor_type { elem_type } }: a name alone is enough for outputs, inputs need the type.
  if (elemType !== undefined) parts.push(bytesField(2, bytesField(1, varintField(1, elemType))));
  return concatBytes(parts);
}

function nodeBytes(opType: string, inputs: readonly string[], outputs: readonly string[], name: string): Uint8Array {
  return concatBytes([
    ...inputs.map((i) => stringField(NODE_INPUT, i)),
    ...outputs.map((o) => stringField(NODE_OUTPUT, o)),
    stringField(NODE_NAME, name),
    stringField(NODE_OP, opType),
  ]);
}

/** The node's bytes with its first input renamed; every other field is copied as is. */
function renameFirstInput(bytes: Uint8Array, node: OnnxNode, input: string): Uint8Array {
  let done = false;
  const parts: Uint8Array[] = [];
  for (const f of readFields(bytes, node.field.valueStart, node.field.valueEnd)) {
    if (!done && f.field === NODE_INPUT) {
      parts.push(stringField(NODE_INPUT, input));
      done = true;
    } else parts.push(bytes.subarray(f.start, f.end));
  }
  return concatBytes(parts);
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

/**
 * Adds attention outputs and/or attention-bias inputs to an ONNX model by
 * splicing new fields into its protobuf bytes; every other byte of the model
 * (weights, metadata, fields this code does not know) is kept as it was.
 * Throws "attention not readable in this export" when no attention softmax exists.
 *
 * @example
 * const { bytes: tapped, attentionOutputs } = editAttention(untapped, { tap: true });
 * // attentionOutputs → ["attentions.0", "attentions.1"]; a session on `tapped` returns them
 */
export function editAttention(bytes: Uint8Array, edit: AttentionEdit): EditedGraph {
  const graph = readOnnxGraph(bytes);
  const discovery = discoverAttention(graph);
  if (discovery.unreadable) throw new Error(discovery.unreadable);
  const existing = new Set(graph.outputs);
  const bySoftmax = new Map<number, AttentionSoftmax>();
  for (const s of discovery.softmaxes) {
    const node = graph.nodes.find((n) => n.name === s.node && n.outputs[0] === s.probs)!;
    bySoftmax.set(node.index, s);
  }
  const attentionOutputs: string[] = [];
  const biasInputs: string[] = [];
  const newOutputs: Uint8Array[] = [];
  const newInputs: Uint8Array[] = [];
  const nodesBefore = new Map<number, Uint8Array[]>();
  const nodesAfter = new Map<number, Uint8Array[]>();
  const replaced = new Map<number, Uint8Array>();
  const castLike = graph.opset >= 15;
  for (const [index, s] of bySoftmax) {
    const node = graph.nodes[index]!;
    const outName = `attentions.${s.layer}`;
    if (edit.tap) {
      if (existing.has(outName) || existing.has(s.probs)) {
        attentionOutputs.push(existing.has(outName) ? outName : s.probs);
      } else {
        nodesAfter.set(index, [
          bytesField(GRAPH_NODE, nodeBytes("Identity", [s.probs], [outName], `evalrx_tap_${s.layer}`)),
        ]);
        newOutputs.push(bytesField(GRAPH_OUTPUT, valueInfo(outName)));
        attentionOutputs.push(outName);
      }
    }
    if (edit.bias) {
      const input = `attention_bias.${s.layer}`;
      const biased = `evalrx_biased_scores_${s.layer}`;
      biasInputs.push(input);
      newInputs.push(bytesField(GRAPH_INPUT, valueInfo(input, FLOAT)));
      const added: Uint8Array[] = [];
      let bias = input;
      if (castLike) {
        // Half-precision graphs get the bias in their own dtype.
        bias = `evalrx_bias_cast_${s.layer}`;
        added.push(
          bytesField(GRAPH_NODE, nodeBytes("CastLike", [input, s.scores], [bias], `evalrx_bias_cast_${s.layer}`)),
        );
      }
      added.push(bytesField(GRAPH_NODE, nodeBytes("Add", [s.scores, bias], [biased], `evalrx_bias_add_${s.layer}`)));
      nodesBefore.set(index, added);
      replaced.set(index, bytesField(GRAPH_NODE, renameFirstInput(bytes, node, biased)));
    }
  }
  const lastOf = (field: number) => graph.graphFields.findLastIndex((f) => f.field === field);
  const lastInput = lastOf(GRAPH_INPUT);
  const lastOutput = lastOf(GRAPH_OUTPUT);
  const parts: Uint8Array[] = [];
  let nodeIndex = 0;
  graph.graphFields.forEach((f, i) => {
    if (f.field === GRAPH_NODE) {
      const index = nodeIndex++;
      parts.push(...(nodesBefore.get(index) ?? []));
      parts.push(replaced.get(index) ?? bytes.subarray(f.start, f.end));
      parts.push(...(nodesAfter.get(index) ?? []));
    } else parts.push(bytes.subarray(f.start, f.end));
    if (i === lastInput) parts.push(...newInputs);
    if (i === lastOutput) parts.push(...newOutputs);
  });
  if (lastInput < 0) parts.push(...newInputs);
  if (lastOutput < 0) parts.push(...newOutputs);
  const graphBytes = concatBytes(parts);
  const modelParts = graph.modelFields.map((f) =>
    f === graph.graphField ? bytesField(MODEL_GRAPH, graphBytes) : bytes.subarray(f.start, f.end),
  );
  return { bytes: concatBytes(modelParts), discovery, attentionOutputs, biasInputs };
}
