/**
 * The last step of an L4 fine-tune: low-rank adapters merged into the ONNX
 * initializers they adapt, so the result is an ordinary model file that every
 * backend loads (no adapter op, no runtime support needed). For a projection
 * `MatMul(x, W)` with W of shape [in, out], an adapter A [in, r], B [r, out] at
 * scale s (LoRA's α/r) adds x·A·B·s; merged, W' = W + s·A·B. Every other byte of
 * the model is copied as it was.
 */
import { DTYPE, ONNX, readOnnxGraph } from "../../models/onnx-read.ts";
import { encodeModel, encodeTensor } from "../../models/onnx-write.ts";
import { bytesField, concatBytes, fieldString, readFields, repeatedInt64 } from "../../models/protobuf.ts";

/** One adapter: the initializer it adapts and its factors, row-major. */
export interface LoraAdapter {
  /** The initializer's name (the weight input of a MatMul, shape [in, out]). */
  readonly weight: string;
  readonly rank: number;
  /** [in, rank], row-major. */
  readonly a: Float32Array;
  /** [rank, out], row-major. */
  readonly b: Float32Array;
  /** LoRA's α / r. */
  readonly scale: number;
}

/**
 * A float32 initializer's dims and values, decoded from the model bytes (raw data only, as exporters write
 * weights); throws naming the initializer when it is missing, not float32, or stored outside the file.
 *
 * @example readInitializer(bytes, "onnx::MatMul_34").dims // [64, 29]
 */
export function readInitializer(bytes: Uint8Array, name: string): { dims: number[]; values: Float32Array } {
  const graph = readOnnxGraph(bytes);
  for (const f of graph.graphFields) {
    if (f.field !== ONNX.graph.initializer) continue;
    const t = parseTensor(bytes, f.valueStart, f.valueEnd);
    if (t.name === name) {
      if (t.dataType !== DTYPE.float) throw new Error(`initializer '${name}' is type ${t.dataType}, not float32`);
      if (!t.raw) throw new Error(`initializer '${name}' has no raw data in the file (external or typed fields)`);
      const count = t.dims.reduce((x, y) => x * y, 1);
      const raw = bytes.slice(t.raw[0], t.raw[1]);
      if (raw.length !== count * 4) throw new Error(`initializer '${name}': ${raw.length} bytes for ${count} floats`);
      return { dims: t.dims, values: new Float32Array(raw.buffer) };
    }
  }
  throw new Error(`the model has no initializer '${name}'`);
}

function parseTensor(bytes: Uint8Array, start: number, end: number) {
  let name = "";
  let dataType = 0;
  let raw: [number, number] | undefined;
  const dims = [];
  for (const f of readFields(bytes, start, end)) {
    if (f.field === ONNX.tensor.dims) dims.push(f);
    else if (f.field === ONNX.tensor.dataType) dataType = f.varint ?? 0;
    else if (f.field === ONNX.tensor.name) name = fieldString(bytes, f);
    else if (f.field === ONNX.tensor.rawData) raw = [f.valueStart, f.valueEnd];
  }
  return { name, dataType, dims: repeatedInt64(bytes, dims), raw };
}

/**
 * The model's bytes with each adapter merged into its initializer (W + s·A·B); throws, naming the adapter,
 * for a weight that is not [in, out] float32 or factors of the wrong size. Every other field is copied.
 *
 * @example mergeLora(bytes, [{ weight: "onnx::MatMul_34", rank: 2, a, b, scale: 2 }]) // a model file
 */
export function mergeLora(bytes: Uint8Array, adapters: readonly LoraAdapter[]): Uint8Array {
  const graph = readOnnxGraph(bytes);
  const byName = new Map(adapters.map((a) => [a.weight, a]));
  if (byName.size !== adapters.length) throw new Error("mergeLora(): two adapters name the same weight");
  const merged = new Set<string>();
  const parts: Uint8Array[] = [];
  for (const f of graph.graphFields) {
    const t = f.field === ONNX.graph.initializer ? parseTensor(bytes, f.valueStart, f.valueEnd) : undefined;
    const adapter = t ? byName.get(t.name) : undefined;
    if (!t || !adapter) {
      parts.push(bytes.subarray(f.start, f.end));
      continue;
    }
    const { dims, values } = readInitializer(bytes, t.name);
    if (dims.length !== 2) throw new Error(`adapter on '${t.name}': the weight has dims [${dims}], not [in, out]`);
    const [rows, cols] = dims as [number, number];
    const r = adapter.rank;
    if (!(Number.isInteger(r) && r >= 1) || adapter.a.length !== rows * r || adapter.b.length !== r * cols)
      throw new Error(
        `adapter on '${t.name}' [${rows}, ${cols}]: A must be [${rows}, ${r}] (${rows * r} values, got ${adapter.a.length}) and B [${r}, ${cols}] (${r * cols}, got ${adapter.b.length})`,
      );
    const out = Float32Array.from(values);
    for (let i = 0; i < rows; i++)
      for (let k = 0; k < r; k++) {
        const aik = adapter.a[i * r + k]! * adapter.scale;
        if (aik === 0) continue;
        for (let j = 0; j < cols; j++) out[i * cols + j]! += aik * adapter.b[k * cols + j]!;
      }
    parts.push(
      bytesField(ONNX.graph.initializer, encodeTensor({ name: t.name, dataType: DTYPE.float, dims, values: out })),
    );
    merged.add(t.name);
  }
  const missing = adapters.filter((a) => !merged.has(a.weight)).map((a) => a.weight);
  if (missing.length)
    throw new Error(`mergeLora(): the model has no initializer ${missing.map((m) => `'${m}'`).join(", ")}`);
  return encodeModel(graph, concatBytes(parts));
}
