/**
 * Building small ONNX models from scratch (graphs for fixtures, oracle tests
 * and benchmarks), over the same protobuf writer the graph rewrites use.
 */
import { ONNX } from "./onnx-read.ts";
import { encodeNode, encodeTensor, encodeValueInfo, type NodeSpec, type TensorSpec } from "./onnx-write.ts";
import { bytesField, concatBytes, stringField, varintField } from "./protobuf.ts";

/** A graph input or output: name, element type and dims (numbers, or symbolic names; omitted: shape unknown). */
export interface ValueSpec {
  readonly name: string;
  readonly elemType: number;
  readonly dims?: readonly (number | string)[];
}

/** What a model to build holds. */
export interface ModelSpecOnnx {
  readonly opset: number;
  readonly inputs: readonly ValueSpec[];
  readonly outputs: readonly ValueSpec[];
  readonly nodes: readonly (NodeSpec | Uint8Array)[];
  readonly initializers?: readonly TensorSpec[];
  /** Extra opset imports, e.g. `{ "com.microsoft": 1 }`. */
  readonly domains?: Readonly<Record<string, number>>;
  readonly name?: string;
}

/**
 * The bytes of an ONNX model (IR version 8) with one graph.
 *
 * @example
 * buildOnnxModel({ opset: 17, inputs: [{ name: "x", elemType: DTYPE.float, dims: [2] }],
 *   outputs: [{ name: "y", elemType: DTYPE.float, dims: [2] }],
 *   nodes: [{ opType: "Relu", inputs: ["x"], outputs: ["y"], name: "relu" }] }) // → Uint8Array(…)
 */
export function buildOnnxModel(spec: ModelSpecOnnx): Uint8Array {
  const G = ONNX.graph;
  const graph = concatBytes([
    ...spec.nodes.map((n) => bytesField(G.node, n instanceof Uint8Array ? n : encodeNode(n))),
    stringField(G.name, spec.name ?? "graph"),
    ...(spec.initializers ?? []).map((t) => bytesField(G.initializer, encodeTensor(t))),
    ...spec.inputs.map((v) => bytesField(G.input, encodeValueInfo(v.name, v.elemType, v.dims))),
    ...spec.outputs.map((v) => bytesField(G.output, encodeValueInfo(v.name, v.elemType, v.dims))),
  ]);
  const opset = (domain: string, version: number) =>
    bytesField(ONNX.model.opset, concatBytes([stringField(1, domain), varintField(2, version)]));
  return concatBytes([
    varintField(ONNX.model.irVersion, 8),
    stringField(2, "evalrx"),
    bytesField(ONNX.model.graph, graph),
    opset("", spec.opset),
    ...Object.entries(spec.domains ?? {}).map(([d, v]) => opset(d, v)),
  ]);
}
