import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as ort from "onnxruntime-node";
import { discoverAttention, editAttention, readOnnxGraph } from "./onnx-graph.ts";
import { readFields } from "./protobuf.ts";
import { REPO_ROOT } from "./load.node.ts";

const vlmDir = `${REPO_ROOT}models/tiny-vlm/onnx/`;
const read = (path: string) => new Uint8Array(readFileSync(path));
const exported = read(`${vlmDir}decoder_model_merged.onnx`);
const untapped = read(`${vlmDir}decoder_untapped.onnx`);
const config = JSON.parse(readFileSync(`${REPO_ROOT}models/tiny-vlm/config.json`, "utf8"));
const L: number = config.text_config.num_hidden_layers;
const H: number = config.text_config.num_attention_heads;
const KVH: number = config.text_config.num_key_value_heads;
const HD: number = config.text_config.head_dim;
const D: number = config.text_config.hidden_size;

/** A deterministic decoder input of length T (no past). */
function feeds(T: number): Record<string, ort.Tensor> {
  const f: Record<string, ort.Tensor> = {
    inputs_embeds: new ort.Tensor(
      "float32",
      Float32Array.from({ length: T * D }, (_, i) => Math.sin(i * 0.37)),
      [1, T, D],
    ),
    attention_mask: new ort.Tensor("int64", new BigInt64Array(T).fill(1n), [1, T]),
    position_ids: new ort.Tensor(
      "int64",
      BigInt64Array.from({ length: T }, (_, i) => BigInt(i)),
      [1, T],
    ),
  };
  for (let l = 0; l < L; l++)
    for (const kv of ["key", "value"])
      f[`past_key_values.${l}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [1, KVH, 0, HD]);
  return f;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe("reading ONNX graphs", () => {
  it("reads the decoder's inputs and outputs, and finds one attention softmax per layer by inspection", () => {
    const graph = readOnnxGraph(untapped);
    expect(graph.inputs).toContain("inputs_embeds");
    expect(graph.outputs).toContain("logits");
    expect(graph.outputs.some((o) => o.startsWith("attentions."))).toBe(false);
    const discovery = discoverAttention(graph);
    expect(discovery.unreadable).toBeUndefined();
    expect(discovery.softmaxes.map((s) => s.layer)).toEqual([...Array(L).keys()]);
  });

  it("refuses corrupt and truncated bytes with a readable error", () => {
    expect(() => readOnnxGraph(untapped.subarray(0, untapped.length - 1000))).toThrow(
      /not a readable ONNX model|corrupt|truncated/,
    );
    expect(() => readOnnxGraph(new TextEncoder().encode("<!DOCTYPE html><html>"))).toThrow(/ONNX/);
    expect(() => readOnnxGraph(new Uint8Array(0))).toThrow(/no graph/);
  });

  it("reports a fused attention export as unreadable instead of crashing", () => {
    const fused = readOnnxGraph(read(`${REPO_ROOT}src/models/fixtures/fused-lm/onnx/model.onnx`));
    const discovery = discoverAttention(fused);
    expect(discovery.softmaxes).toEqual([]);
    expect(discovery.unreadable).toMatch(/^attention not readable in this export: .*MultiHeadAttention/);
    expect(() => editAttention(fused.bytes, { tap: true })).toThrow(/attention not readable in this export/);
  });
});

describe("the graph tap", () => {
  const tapped = editAttention(untapped, { tap: true });

  it("keeps every original field: the model's other fields byte for byte, the graph's fields in order", () => {
    const before = readOnnxGraph(untapped);
    const after = readOnnxGraph(tapped.bytes);
    const other = (g: typeof before) =>
      g.modelFields
        .filter((f) => f !== g.graphField)
        .map((f) => Array.from(g.bytes.subarray(f.start, f.end)).join(","));
    expect(other(after)).toEqual(other(before));
    const key = (g: typeof before) => (f: { start: number; end: number }) =>
      Array.from(g.bytes.subarray(f.start, f.end)).join(",");
    const originalFields = before.graphFields.map(key(before));
    const editedFields = new Set(after.graphFields.map(key(after)));
    expect(originalFields.every((f) => editedFields.has(f))).toBe(true);
    // Only the new Identity nodes and output entries were added.
    expect(after.graphFields.length - before.graphFields.length).toBe(2 * L);
    expect(after.outputs.slice(before.outputs.length)).toEqual([...Array(L).keys()].map((l) => `attentions.${l}`));
    // The nested length prefixes are right: the whole message parses strictly again.
    expect(() => readFields(tapped.bytes)).not.toThrow();
  });

  it("returns the same attention as the exported decoder (max abs diff ≤ 1e-5), rows summing to 1", async () => {
    const [a, b] = await Promise.all([
      ort.InferenceSession.create(exported),
      ort.InferenceSession.create(tapped.bytes),
    ]);
    const T = 11;
    const [ra, rb] = await Promise.all([a.run(feeds(T)), b.run(feeds(T))]);
    for (let l = 0; l < L; l++) {
      const ea = ra[`attentions.${l}`]!.data as Float32Array;
      const eb = rb[`attentions.${l}`]!.data as Float32Array;
      expect(rb[`attentions.${l}`]!.dims).toEqual([1, H, T, T]);
      expect(maxAbsDiff(ea, eb)).toBeLessThanOrEqual(1e-5);
      for (let row = 0; row < H * T; row++) {
        let sum = 0;
        for (let k = 0; k < T; k++) sum += ea[row * T + k]!;
        expect(Math.abs(sum - 1)).toBeLessThanOrEqual(1e-5);
      }
    }
    expect(maxAbsDiff(ra.logits!.data as Float32Array, rb.logits!.data as Float32Array)).toBeLessThanOrEqual(1e-5);
    await Promise.all([a.release(), b.release()]);
  });
});

describe("the attention-bias edit", () => {
  const edited = editAttention(exported, { bias: true });
  const T = 9;
  const bias = (value: number, keys: readonly number[]) => {
    const out: Record<string, ort.Tensor> = {};
    for (const name of edited.biasInputs) {
      const data = new Float32Array(H * T);
      for (let h = 0; h < H; h++) for (const k of keys) data[h * T + k] = value;
      out[name] = new ort.Tensor("float32", data, [1, H, 1, T]);
    }
    return out;
  };

  it("adds one bias input per layer; all zeros leaves the logits unchanged (1e-5)", async () => {
    expect(edited.biasInputs).toEqual([...Array(L).keys()].map((l) => `attention_bias.${l}`));
    const [plain, biased] = await Promise.all([
      ort.InferenceSession.create(exported),
      ort.InferenceSession.create(edited.bytes),
    ]);
    expect(biased.inputNames).toEqual([...plain.inputNames, ...edited.biasInputs]);
    const r0 = await plain.run(feeds(T));
    const r1 = await biased.run({ ...feeds(T), ...bias(0, []) });
    expect(maxAbsDiff(r0.logits!.data as Float32Array, r1.logits!.data as Float32Array)).toBeLessThanOrEqual(1e-5);
    // A positive bias on keys 1–4 raises the attention the last query puts on them, in every layer.
    const r2 = await biased.run({ ...feeds(T), ...bias(3, [1, 2, 3, 4]) });
    for (let l = 0; l < L; l++) {
      const share = (r: ort.InferenceSession.OnnxValueMapType) => {
        const a = r[`attentions.${l}`]!.data as Float32Array;
        let s = 0;
        for (let h = 0; h < H; h++) for (const k of [1, 2, 3, 4]) s += a[(h * T + T - 1) * T + k]!;
        return s / H;
      };
      expect(share(r2)).toBeGreaterThan(share(r1));
    }
    await Promise.all([plain.release(), biased.release()]);
  });
});
