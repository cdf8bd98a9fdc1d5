import { DTYPE } from "./onnx-read.ts";
import { encodeAttribute, encodeNode, type AttributeValue } from "./onnx-write.ts";

/** An operand: a tensor name, or constant int64 values written as a 1-D tensor. */
export type Operand = string | readonly number[];

/**
 * Writes a sequence of standard ONNX nodes for a rewrite, naming every new
 * tensor and node under one prefix so nothing collides with the graph's own
 * names, and choosing each op's form for the graph's opset (Unsqueeze,
 * Squeeze, ReduceSum take axes as an input from opset 13, an attribute before).
 *
 * @example
 * const e = new Emitter("evalrx/mha0", 17);
 * const scores = e.one("MatMul", [q, e.transpose(k, [0, 1, 3, 2])]);
 * e.nodes // → NodeProto payloads, in order
 */
export class Emitter {
  readonly nodes: Uint8Array[] = [];
  private count = 0;
  /**
   * The element type of the tensors being computed, when known statically:
   * constants are then written in it (or cast once, which ONNX Runtime folds)
   * instead of a CastLike that runs on every call.
   */
  dtype?: number;

  constructor(
    readonly prefix: string,
    readonly opset: number,
  ) {}

  /** A fresh tensor or node name under the prefix. */
  fresh(hint: string): string {
    return `${this.prefix}/${hint}_${this.count++}`;
  }

  /** Appends one node; returns its output names (fresh ones unless given). */
  op(
    opType: string,
    inputs: readonly Operand[],
    attributes: Readonly<Record<string, AttributeValue>> = {},
    outputs: number | readonly string[] = 1,
    domain?: string,
  ): string[] {
    const ins = inputs.map((i) => (typeof i === "string" ? i : this.ints(i)));
    const outs = typeof outputs === "number" ? Array.from({ length: outputs }, () => this.fresh(opType)) : [...outputs];
    this.nodes.push(
      encodeNode({
        opType,
        inputs: ins,
        outputs: outs,
        name: this.fresh(`${opType}_node`),
        ...(domain ? { domain } : {}),
        attributes: Object.entries(attributes).map(([name, value]) => encodeAttribute(name, value)),
      }),
    );
    return outs;
  }

  /** Appends one node with one output; returns it. */
  one(opType: string, inputs: readonly Operand[], attributes: Readonly<Record<string, AttributeValue>> = {}): string {
    return this.op(opType, inputs, attributes)[0]!;
  }

  /** A constant int64 tensor (1-D unless `dims` says otherwise). */
  ints(values: readonly number[], dims: readonly number[] = [values.length]): string {
    return this.one("Constant", [], { value: { tensor: { dataType: DTYPE.int64, dims, values } } });
  }

  /** A constant float32 tensor (a scalar unless `dims` says otherwise). */
  floats(values: readonly number[], dims: readonly number[] = []): string {
    return this.one("Constant", [], { value: { tensor: { dataType: DTYPE.float, dims, values } } });
  }

  /** A float constant in the dtype of `like`: `dtype` when set, else CastLike (opset 15+; float32 graphs before). */
  scalarLike(value: number, like: string): string {
    const c = this.floats([value]);
    if (this.dtype === DTYPE.float) return c;
    if (this.dtype !== undefined) return this.cast(c, this.dtype);
    return this.opset >= 15 ? this.one("CastLike", [c, like]) : c;
  }

  cast(x: string, to: number): string {
    return this.one("Cast", [x], { to: { int: to } });
  }

  unsqueeze(x: string, axes: readonly number[]): string {
    return this.opset >= 13 ? this.one("Unsqueeze", [x, axes]) : this.one("Unsqueeze", [x], { axes: { ints: axes } });
  }

  squeeze(x: string, axes: readonly number[]): string {
    return this.opset >= 13 ? this.one("Squeeze", [x, axes]) : this.one("Squeeze", [x], { axes: { ints: axes } });
  }

  reduceSum(x: string, axes: readonly number[], keepdims = 1): string {
    return this.opset >= 13
      ? this.one("ReduceSum", [x, axes], { keepdims: { int: keepdims } })
      : this.one("ReduceSum", [x], { axes: { ints: axes }, keepdims: { int: keepdims } });
  }

  transpose(x: string, perm: readonly number[]): string {
    return this.one("Transpose", [x], { perm: { ints: perm } });
  }

  reshape(x: string, shape: Operand): string {
    return this.one("Reshape", [x, shape]);
  }

  concat(inputs: readonly Operand[], axis: number): string {
    return this.one("Concat", inputs, { axis: { int: axis } });
  }

  /** `x[starts:ends]` along `axes`; each bound is constant values or a 1-D int64 tensor name. */
  slice(x: string, starts: Operand, ends: Operand, axes: readonly number[]): string {
    return this.one("Slice", [x, starts, ends, axes]);
  }

  /** The size of axis `axis` of `x`, as a 1-D int64 tensor of one element. */
  dim(x: string, axis: number): string {
    return this.one("Gather", [this.one("Shape", [x]), [axis]], { axis: { int: 0 } });
  }

  /** Softmax over the last axis (opset < 13 flattens to 2-D at the axis, which for the last axis is the same). */
  softmax(x: string, rank: number): string {
    return this.one("Softmax", [x], { axis: { int: this.opset >= 13 ? -1 : rank - 1 } });
  }
}
