import {
  fieldFloat,
  fieldString,
  readFields,
  readSignedVarint,
  repeatedFloat,
  repeatedInt64,
  WIRE,
  type Field,
} from "./protobuf.ts";

/*
 * ONNX field numbers (onnx.proto), the ones this runtime reads or writes.
 * ModelProto: opset_import = 8, graph = 7, functions = 25.   OperatorSetIdProto: domain = 1, version = 2.
 * GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12, value_info = 13.
 * NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7.
 * AttributeProto: name = 1, f = 2, i = 3, s = 4, t = 5, g = 6, floats = 7, ints = 8, graphs = 11,
 *   type = 20, ref_attr_name = 21.
 * TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9, external_data = 13, data_location = 14.
 * ValueInfoProto: name = 1, type = 2.  TypeProto: tensor_type = 1.  TypeProto.Tensor: elem_type = 1, shape = 2.
 * TensorShapeProto: dim = 1.  Dimension: dim_value = 1, dim_param = 2.
 * FunctionProto: name = 1, input = 4, output = 5, attribute = 6, node = 7, opset_import = 9, domain = 10,
 *   attribute_proto = 11.
 */
export const ONNX = {
  model: { irVersion: 1, graph: 7, opset: 8, functions: 25 },
  graph: { node: 1, name: 2, initializer: 5, input: 11, output: 12, valueInfo: 13 },
  node: { input: 1, output: 2, name: 3, opType: 4, attribute: 5, domain: 7 },
  attribute: { name: 1, f: 2, i: 3, s: 4, t: 5, g: 6, floats: 7, ints: 8, graphs: 11, type: 20, refAttrName: 21 },
  tensor: { dims: 1, dataType: 2, name: 8, rawData: 9, externalData: 13, dataLocation: 14 },
  function: { name: 1, input: 4, output: 5, attribute: 6, node: 7, opset: 9, domain: 10, attributeProto: 11 },
} as const;

/** AttributeProto.AttributeType values. */
export const ATTR = { float: 1, int: 2, string: 3, tensor: 4, graph: 5, floats: 6, ints: 7, graphs: 10 } as const;

/** TensorProto.DataType values. */
export const DTYPE = { float: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, bfloat16: 16 } as const;

/** One attribute of a node, decoded as far as its type allows (graphs are read as subgraph views). */
export interface OnnxAttribute {
  readonly name: string;
  readonly type: number;
  /** The attribute's field inside the node message (to copy it unchanged). */
  readonly field: Field;
  readonly int?: number;
  readonly float?: number;
  readonly string?: string;
  readonly ints?: readonly number[];
  readonly floats?: readonly number[];
  /** Set inside a function body: the attribute takes the caller's attribute of this name. */
  readonly refAttrName?: string;
  /** A `GRAPH` attribute (an `If` branch, a `Loop` body). */
  readonly graph?: GraphView;
  /** A `TENSOR` attribute's dims and element type (a `Constant`'s value). */
  readonly tensor?: {
    readonly dims: readonly number[];
    readonly dataType: number;
    readonly values?: readonly number[];
  };
}

/** One node of an ONNX graph, as read from the bytes. */
export interface OnnxNode {
  /** Position among its graph's nodes. */
  readonly index: number;
  readonly name: string;
  readonly opType: string;
  readonly domain: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** Integer attributes by name (the common case, kept for quick lookups). */
  readonly intAttributes: ReadonlyMap<string, number>;
  readonly attributes: readonly OnnxAttribute[];
  /** The node's field inside its graph (or function) message. */
  readonly field: Field;
}

/** What is declared about a tensor (graph input/output, value_info, initializer). */
export interface TensorInfo {
  readonly elemType?: number;
  /** One entry per axis: a number, a symbolic name, or undefined when the axis is unnamed. */
  readonly dims?: readonly (number | string | undefined)[];
}

/** One graph scope: the main graph, an `If`/`Loop` subgraph, or a function body. */
export interface GraphView {
  /** The whole model's bytes (every `Field` indexes into them). */
  readonly bytes: Uint8Array;
  readonly name: string;
  /** The graph message's top-level fields, in file order (empty for a function body: see `OnnxFunction`). */
  readonly graphFields: readonly Field[];
  readonly nodes: readonly OnnxNode[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** Initializer dims and element types, by name (no weight is decoded). */
  readonly initializers: ReadonlyMap<string, TensorInfo>;
  /** Types and shapes declared for inputs, outputs and value_info entries. */
  readonly declared: ReadonlyMap<string, TensorInfo>;
}

/** An ONNX local function (`FunctionProto`): a named body that nodes of the same op type and domain call. */
export interface OnnxFunction extends GraphView {
  readonly domain: string;
  /** Attribute names the function takes. */
  readonly attributeNames: readonly string[];
  /** Attributes with default values (`attribute_proto`), by name. */
  readonly attributeDefaults: ReadonlyMap<string, OnnxAttribute>;
  /** The function's field in the model message. */
  readonly field: Field;
  readonly fields: readonly Field[];
  readonly opsets: ReadonlyMap<string, number>;
}

/** What an ONNX model holds, read without decoding initializers: the main graph plus model-level fields. */
export interface OnnxGraph extends GraphView {
  readonly modelFields: readonly Field[];
  readonly graphField: Field;
  /** Opset version of the default (`ai.onnx`) domain. */
  readonly opset: number;
  /** Opset version by domain (`""` for ai.onnx, `"com.microsoft"`, …). */
  readonly opsets: ReadonlyMap<string, number>;
  /** Local functions, keyed `domain:name`. */
  readonly functions: ReadonlyMap<string, OnnxFunction>;
  /** Files named by initializers stored outside the model (`location` of external data), in first-seen order. */
  readonly externalData: readonly string[];
}

/** The key of a function (or of the op a node calls): `domain:name`. */
export function functionKey(domain: string, name: string): string {
  return `${domain}:${name}`;
}

function readTensorInfo(bytes: Uint8Array, typeField: Field): TensorInfo {
  for (const t of readFields(bytes, typeField.valueStart, typeField.valueEnd)) {
    if (t.field !== 1 || t.wire !== WIRE.bytes) continue; // tensor_type
    let elemType: number | undefined;
    let dims: (number | string | undefined)[] | undefined;
    for (const f of readFields(bytes, t.valueStart, t.valueEnd)) {
      if (f.field === 1 && f.wire === WIRE.varint) elemType = f.varint;
      else if (f.field === 2 && f.wire === WIRE.bytes) {
        dims = [];
        for (const d of readFields(bytes, f.valueStart, f.valueEnd)) {
          if (d.field !== 1) continue;
          let dim: number | string | undefined;
          for (const x of readFields(bytes, d.valueStart, d.valueEnd)) {
            if (x.field === 1 && x.wire === WIRE.varint) dim = readSignedVarint(bytes, x.valueStart)[0];
            else if (x.field === 2 && x.wire === WIRE.bytes) dim = fieldString(bytes, x);
          }
          dims.push(dim);
        }
      }
    }
    return { ...(elemType !== undefined ? { elemType } : {}), ...(dims ? { dims } : {}) };
  }
  return {};
}

function readValueInfo(bytes: Uint8Array, field: Field): { name: string; info: TensorInfo } {
  let name = "";
  let info: TensorInfo = {};
  for (const f of readFields(bytes, field.valueStart, field.valueEnd)) {
    if (f.field === 1) name = fieldString(bytes, f);
    else if (f.field === 2 && f.wire === WIRE.bytes) info = readTensorInfo(bytes, f);
  }
  return { name, info };
}

interface TensorHeader {
  name: string;
  dims: number[];
  dataType: number;
  external?: string;
  values?: number[];
}

/** A TensorProto's name, dims and type, the external file it lives in, and its values when small and integer/float. */
function readTensorHeader(bytes: Uint8Array, field: Field): TensorHeader {
  const fields = readFields(bytes, field.valueStart, field.valueEnd);
  let name = "";
  let dataType = 0;
  let external: string | undefined;
  let raw: Field | undefined;
  const dimFields: Field[] = [];
  const floatFields: Field[] = [];
  const int64Fields: Field[] = [];
  const int32Fields: Field[] = [];
  for (const f of fields) {
    if (f.field === ONNX.tensor.dims) dimFields.push(f);
    else if (f.field === ONNX.tensor.dataType) dataType = f.varint ?? 0;
    else if (f.field === ONNX.tensor.name) name = fieldString(bytes, f);
    else if (f.field === ONNX.tensor.rawData) raw = f;
    else if (f.field === 4) floatFields.push(f);
    else if (f.field === 5) int32Fields.push(f);
    else if (f.field === 7) int64Fields.push(f);
    else if (f.field === ONNX.tensor.externalData && f.wire === WIRE.bytes) {
      let key = "";
      let value = "";
      for (const e of readFields(bytes, f.valueStart, f.valueEnd)) {
        if (e.field === 1) key = fieldString(bytes, e);
        else if (e.field === 2) value = fieldString(bytes, e);
      }
      if (key === "location") external = value;
    }
  }
  const dims = repeatedInt64(bytes, dimFields);
  const count = dims.reduce((a, b) => a * b, 1);
  let values: number[] | undefined;
  // Small integer/float tensors (shapes, axes, scales) are decoded: rank inference and rewrites read them.
  if (count <= 64) {
    if (raw) {
      const view = new DataView(bytes.buffer, bytes.byteOffset + raw.valueStart, raw.valueEnd - raw.valueStart);
      if (dataType === DTYPE.int64 && view.byteLength === count * 8)
        values = Array.from({ length: count }, (_, i) => Number(view.getBigInt64(i * 8, true)));
      else if (dataType === DTYPE.int32 && view.byteLength === count * 4)
        values = Array.from({ length: count }, (_, i) => view.getInt32(i * 4, true));
      else if (dataType === DTYPE.float && view.byteLength === count * 4)
        values = Array.from({ length: count }, (_, i) => view.getFloat32(i * 4, true));
    } else if (dataType === DTYPE.int64 && int64Fields.length) values = repeatedInt64(bytes, int64Fields);
    else if (dataType === DTYPE.int32 && int32Fields.length) values = repeatedInt64(bytes, int32Fields);
    else if (dataType === DTYPE.float && floatFields.length) values = repeatedFloat(bytes, floatFields);
  }
  return { name, dims, dataType, ...(external ? { external } : {}), ...(values ? { values } : {}) };
}

function readAttribute(bytes: Uint8Array, field: Field, scope: string, external: Set<string>): OnnxAttribute {
  let name = "";
  let type = 0;
  let int: number | undefined;
  let float: number | undefined;
  let string: string | undefined;
  let refAttrName: string | undefined;
  let graph: GraphView | undefined;
  let tensor: OnnxAttribute["tensor"];
  const intFields: Field[] = [];
  const floatFields: Field[] = [];
  for (const a of readFields(bytes, field.valueStart, field.valueEnd)) {
    const A = ONNX.attribute;
    if (a.field === A.name) name = fieldString(bytes, a);
    else if (a.field === A.type) type = a.varint ?? 0;
    else if (a.field === A.i && a.wire === WIRE.varint) int = readSignedVarint(bytes, a.valueStart)[0];
    else if (a.field === A.f && a.wire === WIRE.fixed32) float = fieldFloat(bytes, a);
    else if (a.field === A.s && a.wire === WIRE.bytes) string = fieldString(bytes, a);
    else if (a.field === A.ints) intFields.push(a);
    else if (a.field === A.floats) floatFields.push(a);
    else if (a.field === A.refAttrName) refAttrName = fieldString(bytes, a);
    else if (a.field === A.g && a.wire === WIRE.bytes) graph = readGraphScope(bytes, a, `${scope}/${name}`, external);
    else if (a.field === A.t && a.wire === WIRE.bytes) {
      const header = readTensorHeader(bytes, a);
      tensor = { dims: header.dims, dataType: header.dataType, ...(header.values ? { values: header.values } : {}) };
    }
  }
  // Old writers omit `type`; infer it from the payload.
  if (type === 0)
    type = graph
      ? ATTR.graph
      : tensor
        ? ATTR.tensor
        : int !== undefined
          ? ATTR.int
          : float !== undefined
            ? ATTR.float
            : string !== undefined
              ? ATTR.string
              : intFields.length
                ? ATTR.ints
                : floatFields.length
                  ? ATTR.floats
                  : 0;
  return {
    name,
    type,
    field,
    ...(int !== undefined ? { int } : {}),
    ...(float !== undefined ? { float } : {}),
    ...(string !== undefined ? { string } : {}),
    ...(intFields.length ? { ints: repeatedInt64(bytes, intFields) } : {}),
    ...(floatFields.length ? { floats: repeatedFloat(bytes, floatFields) } : {}),
    ...(refAttrName !== undefined ? { refAttrName } : {}),
    ...(graph ? { graph } : {}),
    ...(tensor ? { tensor } : {}),
  };
}

function readNode(bytes: Uint8Array, field: Field, index: number, scope: string, external: Set<string>): OnnxNode {
  const inputs: string[] = [];
  const outputs: string[] = [];
  const intAttributes = new Map<string, number>();
  const attributeFields: Field[] = [];
  let name = "";
  let opType = "";
  let domain = "";
  const N = ONNX.node;
  for (const f of readFields(bytes, field.valueStart, field.valueEnd)) {
    if (f.field === N.input) inputs.push(fieldString(bytes, f));
    else if (f.field === N.output) outputs.push(fieldString(bytes, f));
    else if (f.field === N.name) name = fieldString(bytes, f);
    else if (f.field === N.opType) opType = fieldString(bytes, f);
    else if (f.field === N.domain) domain = fieldString(bytes, f);
    else if (f.field === N.attribute) attributeFields.push(f);
  }
  const where = `${scope}/${name || opType}`;
  const attributes = attributeFields.map((f) => readAttribute(bytes, f, where, external));
  for (const a of attributes) if (a.int !== undefined) intAttributes.set(a.name, a.int);
  return { index, name, opType, domain, inputs, outputs, intAttributes, attributes, field };
}

/** Reads one GraphProto (main graph or subgraph) whose message is the payload of `field`. */
function readGraphScope(bytes: Uint8Array, field: Field, scope: string, external: Set<string>): GraphView {
  const graphFields = readFields(bytes, field.valueStart, field.valueEnd);
  const nodes: OnnxNode[] = [];
  const inputs: string[] = [];
  const outputs: string[] = [];
  const initializers = new Map<string, TensorInfo>();
  const declared = new Map<string, TensorInfo>();
  let name = "";
  const G = ONNX.graph;
  for (const f of graphFields) {
    if (f.field === G.node) nodes.push(readNode(bytes, f, nodes.length, scope, external));
    else if (f.field === G.name) name = fieldString(bytes, f);
    else if (f.field === G.input || f.field === G.output || f.field === G.valueInfo) {
      const { name: n, info } = readValueInfo(bytes, f);
      if (f.field === G.input) inputs.push(n);
      if (f.field === G.output) outputs.push(n);
      if (!declared.has(n) || info.dims) declared.set(n, info);
    } else if (f.field === G.initializer) {
      const header = readTensorHeader(bytes, f);
      initializers.set(header.name, { elemType: header.dataType, dims: header.dims });
      if (header.external) external.add(header.external);
    }
  }
  return { bytes, name, graphFields, nodes, inputs, outputs, initializers, declared };
}

function readOpsets(bytes: Uint8Array, fields: readonly Field[], fieldNumber: number): Map<string, number> {
  const opsets = new Map<string, number>();
  for (const f of fields) {
    if (f.field !== fieldNumber || f.wire !== WIRE.bytes) continue;
    let domain = "";
    let version = 0;
    for (const o of readFields(bytes, f.valueStart, f.valueEnd)) {
      if (o.field === 1) domain = fieldString(bytes, o);
      else if (o.field === 2) version = o.varint ?? 0;
    }
    opsets.set(domain === "ai.onnx" ? "" : domain, version);
  }
  return opsets;
}

function readFunction(bytes: Uint8Array, field: Field, external: Set<string>): OnnxFunction {
  const fields = readFields(bytes, field.valueStart, field.valueEnd);
  const F = ONNX.function;
  let name = "";
  let domain = "";
  const inputs: string[] = [];
  const outputs: string[] = [];
  const attributeNames: string[] = [];
  const attributeDefaults = new Map<string, OnnxAttribute>();
  const nodeFields: Field[] = [];
  for (const f of fields) {
    if (f.field === F.name) name = fieldString(bytes, f);
    else if (f.field === F.domain) domain = fieldString(bytes, f);
    else if (f.field === F.input) inputs.push(fieldString(bytes, f));
    else if (f.field === F.output) outputs.push(fieldString(bytes, f));
    else if (f.field === F.attribute) attributeNames.push(fieldString(bytes, f));
    else if (f.field === F.node) nodeFields.push(f);
  }
  const scope = `function ${domain}.${name}`;
  for (const f of fields)
    if (f.field === F.attributeProto) {
      const a = readAttribute(bytes, f, scope, external);
      attributeDefaults.set(a.name, a);
      attributeNames.push(a.name);
    }
  const nodes = nodeFields.map((f, i) => readNode(bytes, f, i, scope, external));
  return {
    bytes,
    name,
    domain,
    graphFields: [],
    nodes,
    inputs,
    outputs,
    initializers: new Map(),
    declared: new Map(),
    attributeNames,
    attributeDefaults,
    field,
    fields,
    opsets: readOpsets(bytes, fields, F.opset),
  };
}

/**
 * Reads an ONNX model's structure — the main graph, every `If`/`Loop`
 * subgraph, the local functions, declared types and shapes, initializer dims
 * — without copying or decoding the weights.
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
  const graphField = modelFields.find((f) => f.field === ONNX.model.graph && f.wire === WIRE.bytes);
  if (!graphField) throw new Error("not an ONNX model: the file has no graph (corrupt, truncated, or another format)");
  const external = new Set<string>();
  let main: GraphView;
  const functions = new Map<string, OnnxFunction>();
  try {
    main = readGraphScope(bytes, graphField, "main graph", external);
    for (const f of modelFields)
      if (f.field === ONNX.model.functions && f.wire === WIRE.bytes) {
        const fn = readFunction(bytes, f, external);
        functions.set(functionKey(fn.domain, fn.name), fn);
      }
  } catch (error) {
    throw new Error(`not a readable ONNX model (corrupt or truncated file): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const opsets = readOpsets(bytes, modelFields, ONNX.model.opset);
  return {
    ...main,
    modelFields,
    graphField,
    opset: opsets.get("") ?? 0,
    opsets,
    functions,
    externalData: [...external],
  };
}

/** An attribute of a node by name. */
export function attribute(node: OnnxNode, name: string): OnnxAttribute | undefined {
  return node.attributes.find((a) => a.name === name);
}

/** Every node of a graph and of its subgraphs, depth first, with the path of scopes that holds it. */
export function* walkNodes(
  graph: GraphView,
  path: readonly ScopeStep[] = [],
): Generator<{ node: OnnxNode; graph: GraphView; path: readonly ScopeStep[] }> {
  for (const node of graph.nodes) {
    yield { node, graph, path };
    for (const a of node.attributes)
      if (a.graph) yield* walkNodes(a.graph, [...path, { node: node.name, opType: node.opType, attribute: a.name }]);
  }
}

/** One step into a subgraph: the node that holds it and which graph attribute (`then_branch`, `body`, …). */
export interface ScopeStep {
  readonly node: string;
  readonly opType: string;
  readonly attribute: string;
}

/** A scope path in words: "main graph", "If 'optimum::if' then_branch", … */
export function describeScope(path: readonly ScopeStep[], fn?: string): string {
  const steps = path.map((s) => `${s.opType} '${s.node}' ${s.attribute}`);
  const base = steps.length ? steps.join(" › ") : "main graph";
  return fn ? `${base} › function ${fn}` : base;
}
