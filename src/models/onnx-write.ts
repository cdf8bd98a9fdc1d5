/**
 * Writing ONNX protobuf messages field by field. A rewrite re-emits a graph
 * from its original fields: what it does not change is copied as the
 * original bytes (weights, metadata, fields this code does not know), so no
 * schema can drop anything.
 */
import { ATTR, DTYPE, ONNX, type GraphView, type OnnxGraph, type OnnxNode } from "./onnx-read.ts";
import {
  bytesField,
  concatBytes,
  floatField,
  int64Field,
  readFields,
  stringField,
  varintField,
  WIRE,
} from "./protobuf.ts";

/** A constant tensor to write: float32, int64, int32 or bool values. */
export interface TensorSpec {
  readonly dataType: number;
  readonly dims: readonly number[];
  readonly values: ArrayLike<number>;
  readonly name?: string;
}

/** An attribute value: an int, a float, int or float lists, a string, a tensor, or a graph payload. */
export type AttributeValue =
  | { readonly int: number }
  | { readonly float: number }
  | { readonly ints: readonly number[] }
  | { readonly floats: readonly number[] }
  | { readonly string: string }
  | { readonly tensor: TensorSpec }
  | { readonly graph: Uint8Array };

/** A TensorProto payload with its values as raw little-endian data. */
export function encodeTensor(spec: TensorSpec): Uint8Array {
  const T = ONNX.tensor;
  const count = spec.dims.reduce((a, b) => a * b, 1);
  if (count !== spec.values.length)
    throw new Error(`encodeTensor: dims [${spec.dims.join(", ")}] hold ${count} values, got ${spec.values.length}`);
  let raw: Uint8Array;
  if (spec.dataType === DTYPE.float) raw = new Uint8Array(Float32Array.from(spec.values).buffer);
  else if (spec.dataType === DTYPE.int64)
    raw = new Uint8Array(BigInt64Array.from(Array.from(spec.values, (v) => BigInt(v))).buffer);
  else if (spec.dataType === DTYPE.int32) raw = new Uint8Array(Int32Array.from(spec.values).buffer);
  else if (spec.dataType === DTYPE.bool) raw = Uint8Array.from(spec.values, (v) => (v ? 1 : 0));
  else throw new Error(`encodeTensor: data type ${spec.dataType} is not written by this code`);
  return concatBytes([
    ...spec.dims.map((d) => int64Field(T.dims, d)),
    varintField(T.dataType, spec.dataType),
    ...(spec.name ? [stringField(T.name, spec.name)] : []),
    bytesField(T.rawData, raw),
  ]);
}

/** An AttributeProto payload. */
export function encodeAttribute(name: string, value: AttributeValue): Uint8Array {
  const A = ONNX.attribute;
  const parts: Uint8Array[] = [stringField(A.name, name)];
  if ("int" in value) parts.push(int64Field(A.i, value.int), varintField(A.type, ATTR.int));
  else if ("float" in value) parts.push(floatField(A.f, value.float), varintField(A.type, ATTR.float));
  else if ("ints" in value) parts.push(...value.ints.map((v) => int64Field(A.ints, v)), varintField(A.type, ATTR.ints));
  else if ("floats" in value)
    parts.push(...value.floats.map((v) => floatField(A.floats, v)), varintField(A.type, ATTR.floats));
  else if ("string" in value) parts.push(stringField(A.s, value.string), varintField(A.type, ATTR.string));
  else if ("tensor" in value) parts.push(bytesField(A.t, encodeTensor(value.tensor)), varintField(A.type, ATTR.tensor));
  else parts.push(bytesField(A.g, value.graph), varintField(A.type, ATTR.graph));
  return concatBytes(parts);
}

/** What a new node is. Attributes are AttributeProto payloads (see `encodeAttribute`). */
export interface NodeSpec {
  readonly opType: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly name: string;
  readonly domain?: string;
  readonly attributes?: readonly Uint8Array[];
}

/** A NodeProto payload. */
export function encodeNode(spec: NodeSpec): Uint8Array {
  const N = ONNX.node;
  return concatBytes([
    ...spec.inputs.map((i) => stringField(N.input, i)),
    ...spec.outputs.map((o) => stringField(N.output, o)),
    stringField(N.name, spec.name),
    stringField(N.opType, spec.opType),
    ...(spec.attributes ?? []).map((a) => bytesField(N.attribute, a)),
    ...(spec.domain ? [stringField(N.domain, spec.domain)] : []),
  ]);
}

/** What to change in a copied node; everything else is copied byte for byte. */
export interface NodeChanges {
  readonly inputs?: readonly string[];
  readonly outputs?: readonly string[];
  readonly name?: string;
  /** Attribute payload replacing the attribute of that name (null drops it). */
  readonly attributes?: ReadonlyMap<string, Uint8Array | null>;
  /** Attribute payloads added at the end. */
  readonly addAttributes?: readonly Uint8Array[];
}

/** A node's payload with some fields changed and every other field copied as is. */
export function copyNode(bytes: Uint8Array, node: OnnxNode, changes: NodeChanges): Uint8Array {
  const N = ONNX.node;
  const parts: Uint8Array[] = [];
  let inputsDone = false;
  let outputsDone = false;
  let nameDone = false;
  let attrIndex = 0;
  for (const f of readFields(bytes, node.field.valueStart, node.field.valueEnd)) {
    if (f.field === N.input && changes.inputs) {
      if (!inputsDone) parts.push(...changes.inputs.map((i) => stringField(N.input, i)));
      inputsDone = true;
    } else if (f.field === N.output && changes.outputs) {
      if (!outputsDone) parts.push(...changes.outputs.map((o) => stringField(N.output, o)));
      outputsDone = true;
    } else if (f.field === N.name && changes.name !== undefined) {
      parts.push(stringField(N.name, changes.name));
      nameDone = true;
    } else if (f.field === N.attribute) {
      const attr = node.attributes[attrIndex++]!;
      const replacement = changes.attributes?.get(attr.name);
      if (replacement === undefined) parts.push(bytes.subarray(f.start, f.end));
      else if (replacement !== null) parts.push(bytesField(N.attribute, replacement));
    } else parts.push(bytes.subarray(f.start, f.end));
  }
  // A node without inputs (a Constant) or outputs has no field to replace: add them first.
  const head: Uint8Array[] = [];
  if (changes.inputs && !inputsDone) head.push(...changes.inputs.map((i) => stringField(N.input, i)));
  if (changes.outputs && !outputsDone) head.push(...changes.outputs.map((o) => stringField(N.output, o)));
  if (changes.name !== undefined && !nameDone) head.push(stringField(N.name, changes.name));
  return concatBytes([...head, ...parts, ...(changes.addAttributes ?? []).map((a) => bytesField(N.attribute, a))]);
}

/** A ValueInfoProto payload: a name, and a tensor type when the element type is known. */
export function encodeValueInfo(name: string, elemType?: number, dims?: readonly (number | string)[]): Uint8Array {
  const parts = [stringField(1, name)];
  if (elemType !== undefined) {
    const tensor = [varintField(1, elemType)];
    if (dims)
      tensor.push(
        bytesField(
          2,
          concatBytes(dims.map((d) => bytesField(1, typeof d === "number" ? int64Field(1, d) : stringField(2, d)))),
        ),
      );
    parts.push(bytesField(2, bytesField(1, concatBytes(tensor))));
  }
  return concatBytes(parts);
}

/** How to re-emit a graph. Payloads are the messages without their field tag. */
export interface GraphPlan {
  /** Per node index: the NodeProto payloads that take its place (omitted: the node is copied unchanged). */
  readonly nodes?: ReadonlyMap<number, readonly Uint8Array[]>;
  readonly addInputs?: readonly Uint8Array[];
  readonly addOutputs?: readonly Uint8Array[];
  readonly addInitializers?: readonly Uint8Array[];
  /** Output names to drop (e.g. a function's outputs that inlining replaced). */
  readonly dropOutputs?: ReadonlySet<string>;
}

/** A graph's GraphProto payload after `plan`, every other field copied as it was. */
export function encodeGraph(graph: GraphView, plan: GraphPlan): Uint8Array {
  const G = ONNX.graph;
  const fields = graph.graphFields;
  const lastOf = (n: number) => fields.findLastIndex((f) => f.field === n);
  const lastInput = lastOf(G.input);
  const lastOutput = lastOf(G.output);
  const lastInit = lastOf(G.initializer);
  const parts: Uint8Array[] = [];
  let nodeIndex = 0;
  let outputIndex = 0;
  fields.forEach((f, i) => {
    if (f.field === G.node) {
      const replacement = plan.nodes?.get(nodeIndex++);
      if (replacement) parts.push(...replacement.map((n) => bytesField(G.node, n)));
      else parts.push(graph.bytes.subarray(f.start, f.end));
    } else if (f.field === G.output && plan.dropOutputs?.has(graph.outputs[outputIndex++]!)) {
      // dropped
    } else parts.push(graph.bytes.subarray(f.start, f.end));
    if (i === lastInput) parts.push(...(plan.addInputs ?? []).map((v) => bytesField(G.input, v)));
    if (i === lastOutput) parts.push(...(plan.addOutputs ?? []).map((v) => bytesField(G.output, v)));
    if (i === lastInit) parts.push(...(plan.addInitializers ?? []).map((v) => bytesField(G.initializer, v)));
  });
  if (lastInput < 0) parts.push(...(plan.addInputs ?? []).map((v) => bytesField(G.input, v)));
  if (lastOutput < 0) parts.push(...(plan.addOutputs ?? []).map((v) => bytesField(G.output, v)));
  if (lastInit < 0) parts.push(...(plan.addInitializers ?? []).map((v) => bytesField(G.initializer, v)));
  return concatBytes(parts);
}

/**
 * The model's bytes with its main graph replaced by `graph` (a GraphProto
 * payload); `functions` drops local functions by key (`domain:name`).
 */
export function encodeModel(
  model: OnnxGraph,
  graph: Uint8Array,
  options: { readonly dropFunctions?: ReadonlySet<string> } = {},
): Uint8Array {
  const parts: Uint8Array[] = [];
  const functionFields = new Map([...model.functions.values()].map((fn) => [fn.field.start, fn]));
  for (const f of model.modelFields) {
    if (f === model.graphField) parts.push(bytesField(ONNX.model.graph, graph));
    else if (f.field === ONNX.model.functions && f.wire === WIRE.bytes) {
      const fn = functionFields.get(f.start);
      if (!fn || !options.dropFunctions?.has(`${fn.domain}:${fn.name}`))
        parts.push(model.bytes.subarray(f.start, f.end));
    } else parts.push(model.bytes.subarray(f.start, f.end));
  }
  return concatBytes(parts);
}
