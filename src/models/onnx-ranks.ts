import { attribute, type GraphView, type OnnxNode } from "./onnx-read.ts";

const SAME_RANK = new Set([
  "Abs",
  "Cast",
  "CastLike",
  "Ceil",
  "Clip",
  "Cos",
  "CumSum",
  "Dropout",
  "Elu",
  "Erf",
  "Exp",
  "FastGelu",
  "Floor",
  "Gelu",
  "BiasGelu",
  "HardSigmoid",
  "Identity",
  "IsNaN",
  "IsInf",
  "LayerNormalization",
  "LeakyRelu",
  "Log",
  "LogSoftmax",
  "Mish",
  "Neg",
  "Not",
  "QuickGelu",
  "Reciprocal",
  "Relu",
  "RMSNormalization",
  "Round",
  "Selu",
  "Sigmoid",
  "Sign",
  "SimplifiedLayerNormalization",
  "SkipLayerNormalization",
  "SkipSimplifiedLayerNormalization",
  "Sin",
  "Softmax",
  "Softplus",
  "Softsign",
  "Sqrt",
  "Tanh",
  "Trilu",
  "Tile",
  "Pad",
  "Slice",
  "Split",
  "Resize",
  "RotaryEmbedding",
  "Conv",
  "BatchNormalization",
  "InstanceNormalization",
  "GroupNormalization",
]);
const BROADCAST = new Set([
  "Add",
  "Sub",
  "Mul",
  "Div",
  "Pow",
  "Max",
  "Min",
  "Mod",
  "Equal",
  "Less",
  "LessOrEqual",
  "Greater",
  "GreaterOrEqual",
  "And",
  "Or",
  "Xor",
  "Where",
  "PRelu",
  "BitShift",
  "Sum",
  "Mean",
]);
const REDUCE = /^Reduce(Sum|Mean|Max|Min|Prod|L1|L2|LogSum|LogSumExp|SumSquare)$|^Arg(Max|Min)$/;

/**
 * What is known statically about a graph's tensors: the rank of each tensor
 * whose rank can be told, and the length of 1-D integer tensors (shapes,
 * axes) — enough to tell a 3-D batched attention from a 4-D one, or a BSH
 * key from a BNSH one, without running anything.
 */
export interface StaticShapes {
  readonly ranks: ReadonlyMap<string, number>;
  /** Length of 1-D integer tensors (a Reshape's target shape has as many entries as the result's rank). */
  readonly lengths: ReadonlyMap<string, number>;
  /** Values of small constant integer tensors (Constant nodes, initializers are not decoded here). */
  readonly values: ReadonlyMap<string, readonly number[]>;
}

/**
 * Infers tensor ranks through a graph in node order, from declared shapes,
 * initializer dims, constants and the rules of common ops. `outer` gives what
 * an enclosing graph knows (a subgraph sees its parent's tensors).
 *
 * @example
 * inferRanks(readOnnxGraph(bytes)).ranks.get("/h.0/attn/Softmax_output_0") // → 3 (batched [batch·heads, q, k])
 */
export function inferRanks(graph: GraphView, outer?: StaticShapes): StaticShapes {
  const ranks = new Map<string, number>(outer?.ranks ?? []);
  const lengths = new Map<string, number>(outer?.lengths ?? []);
  const values = new Map<string, readonly number[]>(outer?.values ?? []);
  for (const [name, info] of graph.initializers) {
    if (info.dims) ranks.set(name, info.dims.length);
    if (info.dims?.length === 1 && typeof info.dims[0] === "number") lengths.set(name, info.dims[0]);
  }
  for (const [name, info] of graph.declared) if (info.dims) ranks.set(name, info.dims.length);
  const rank = (t: string | undefined) => (t ? ranks.get(t) : undefined);
  const axesCount = (node: OnnxNode): number | undefined => {
    const attr = attribute(node, "axes");
    if (attr?.ints) return attr.ints.length;
    const input = node.inputs[1];
    return input ? lengths.get(input) : undefined;
  };
  for (const node of graph.nodes) {
    const [out] = node.outputs;
    if (!out) continue;
    const set = (r: number | undefined) => {
      if (r !== undefined && r >= 0) for (const o of node.outputs) if (o) ranks.set(o, r);
    };
    const op = node.opType;
    const r0 = rank(node.inputs[0]);
    if (op === "Constant") {
      const t = node.attributes.find((a) => a.tensor)?.tensor;
      const ints = attribute(node, "value_ints")?.ints;
      if (t) {
        set(t.dims.length);
        if (t.dims.length === 1) lengths.set(out, t.dims[0]!);
        if (t.values) values.set(out, t.values);
      } else if (ints) {
        set(1);
        lengths.set(out, ints.length);
        values.set(out, ints);
      } else if (attribute(node, "value_int") || attribute(node, "value_float")) set(0);
    } else if (SAME_RANK.has(op)) {
      set(r0);
      if (r0 === 1 && (op === "Cast" || op === "Identity") && lengths.has(node.inputs[0]!))
        lengths.set(out, lengths.get(node.inputs[0]!)!);
      if ((op === "Cast" || op === "Identity") && values.has(node.inputs[0]!))
        values.set(out, values.get(node.inputs[0]!)!);
      if (op === "Slice" && r0 === 1) {
        const len = lengths.get(node.inputs[0]!);
        const starts = values.get(node.inputs[1] ?? "");
        const ends = values.get(node.inputs[2] ?? "");
        if (len !== undefined && starts?.length === 1 && ends?.length === 1) {
          const clamp = (v: number) => Math.max(0, Math.min(len, v < 0 ? v + len : v));
          lengths.set(out, Math.max(0, clamp(ends[0]!) - clamp(starts[0]!)));
        }
      }
    } else if (BROADCAST.has(op)) {
      const rs = node.inputs.filter((i) => i !== "").map(rank);
      if (rs.every((r) => r !== undefined)) set(Math.max(...(rs as number[])));
    } else if (op === "MatMul" || op === "FusedMatMul" || op === "MatMulNBits" || op === "MatMulInteger") {
      const r1 = rank(node.inputs[1]);
      if (op === "MatMulNBits") set(r0);
      else if (r0 !== undefined && r1 !== undefined)
        set(r0 >= 2 && r1 >= 2 ? Math.max(r0, r1) : r1 === 1 ? r0 - 1 : r1 - 1);
    } else if (op === "Gemm" || op === "Flatten") set(2);
    else if (op === "Transpose") set(attribute(node, "perm")?.ints?.length ?? r0);
    else if (op === "Reshape") set(lengths.get(node.inputs[1] ?? ""));
    else if (op === "Expand") {
      const len = lengths.get(node.inputs[1] ?? "");
      if (len !== undefined && r0 !== undefined) set(Math.max(len, r0));
    } else if (op === "Unsqueeze") {
      const n = axesCount(node);
      if (r0 !== undefined && n !== undefined) {
        set(r0 + n);
        if (r0 === 0 && n === 1) lengths.set(out, 1);
      }
    } else if (op === "Squeeze") {
      const n = axesCount(node);
      if (r0 !== undefined && n !== undefined) set(r0 - n);
    } else if (op === "Concat") {
      set(node.inputs.map(rank).find((r) => r !== undefined));
      const ls = node.inputs.map((i) => lengths.get(i));
      if (ls.every((l) => l !== undefined))
        lengths.set(
          out,
          (ls as number[]).reduce((a, b) => a + b, 0),
        );
    } else if (op === "Shape") {
      set(1);
      if (r0 !== undefined) {
        const start = node.intAttributes.get("start") ?? 0;
        const end = node.intAttributes.get("end") ?? r0;
        const norm = (v: number) => Math.max(0, Math.min(r0, v < 0 ? v + r0 : v));
        lengths.set(out, Math.max(0, norm(end) - norm(start)));
      }
    } else if (op === "Size") set(0);
    else if (op === "Range" || op === "NonZero") set(op === "Range" ? 1 : 2);
    else if (op === "ConstantOfShape") set(lengths.get(node.inputs[0] ?? ""));
    else if (op === "Gather") {
      const ri = rank(node.inputs[1]);
      if (r0 !== undefined && ri !== undefined) {
        set(r0 - 1 + ri);
        if (r0 === 1 && ri === 1 && lengths.has(node.inputs[1]!)) lengths.set(out, lengths.get(node.inputs[1]!)!);
      }
    } else if (op === "GatherElements" || op === "ScatterND" || op === "ScatterElements") set(r0);
    else if (REDUCE.test(op)) {
      const keep = node.intAttributes.get("keepdims") ?? 1;
      if (r0 !== undefined) {
        if (keep) set(r0);
        else if (op.startsWith("Arg")) set(r0 - 1);
        else {
          const n = axesCount(node);
          if (n !== undefined) set(r0 - n);
          else if (!node.inputs[1] && !attribute(node, "axes")) set(0);
        }
      }
    } else if (op === "Einsum") {
      const eq = attribute(node, "equation")?.string;
      const rhs = eq?.split("->")[1];
      if (rhs !== undefined) set(rhs.replace(/\s|\.\.\./g, "").length);
    } else if (
      node.domain === "com.microsoft" &&
      /^(Attention|MultiHeadAttention|GroupQueryAttention|PackedAttention|SparseAttention)$/.test(op)
    ) {
      ranks.set(out, 3);
      for (const o of node.outputs.slice(1)) if (o) ranks.set(o, op === "Attention" ? 5 : 4);
    }
  }
  return { ranks, lengths, values };
}
