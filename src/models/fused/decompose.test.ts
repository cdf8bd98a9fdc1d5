import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { maxAbsDiff } from "../fixtures/max-abs-diff.ts";
import { discoverAttention, editAttention } from "../attention-graph.ts";
import { buildOnnxModel, type ValueSpec } from "../onnx-build.ts";
import { DTYPE, readOnnxGraph } from "../onnx-read.ts";
import { encodeAttribute, type AttributeValue } from "../onnx-write.ts";
import { decomposeFusedAttention } from "./decompose.ts";

/**
 * The oracle: each fused op runs through ONNX Runtime's own kernel
 * (onnxruntime-node, CPU) and through our decomposition, on the same inputs;
 * every output (attention output, present key/value) must agree, and the
 * decomposed graph must expose one attention softmax whose rows sum to 1.
 */

/** A seeded uniform stream in [-1, 1). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

type Feed = { name: string; type: "float32" | "int32" | "int64"; dims: number[]; data?: number[] };

interface OpCase {
  readonly op: "GroupQueryAttention" | "MultiHeadAttention" | "Attention";
  readonly inputs: readonly (Feed | "")[];
  readonly outputs: readonly string[];
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly opset?: number;
  /** Declare every input's last dim symbolic, so nothing about head sizes is known before running. */
  readonly symbolic?: boolean;
}

const ELEM = { float32: DTYPE.float, int32: DTYPE.int32, int64: DTYPE.int64 } as const;

function tensor(feed: Feed, next: () => number): ort.Tensor {
  const n = feed.dims.reduce((a, b) => a * b, 1);
  if (feed.type === "float32")
    return new ort.Tensor("float32", Float32Array.from(feed.data ?? Array.from({ length: n }, next)), feed.dims);
  if (feed.type === "int32") return new ort.Tensor("int32", Int32Array.from(feed.data!), feed.dims);
  return new ort.Tensor("int64", BigInt64Array.from(feed.data!.map(BigInt)), feed.dims);
}

function fusedModel(c: OpCase): Uint8Array {
  const inputs = c.inputs.filter((i): i is Feed => i !== "");
  const value = (f: Feed): ValueSpec => ({
    name: f.name,
    elemType: ELEM[f.type],
    dims: c.symbolic && f.dims.length ? [...f.dims.slice(0, -1), `${f.name}_width`] : f.dims,
  });
  return buildOnnxModel({
    opset: c.opset ?? 17,
    domains: { "com.microsoft": 1 },
    inputs: inputs.map(value),
    outputs: c.outputs.filter(Boolean).map((name) => ({ name, elemType: DTYPE.float })),
    nodes: [
      {
        opType: c.op,
        domain: "com.microsoft",
        name: `fused_${c.op}`,
        inputs: c.inputs.map((i) => (i === "" ? "" : i.name)),
        outputs: c.outputs,
        attributes: Object.entries(c.attributes).map(([k, v]) => encodeAttribute(k, v)),
      },
    ],
  });
}

/** The largest difference between two tensors of the same shape. */
function tensorDiff(a: ort.Tensor, b: ort.Tensor): number {
  expect(b.dims).toEqual(a.dims);
  return maxAbsDiff(a.data as Float32Array, b.data as Float32Array);
}

/** Runs the fused op and its decomposition on the same inputs; returns the decomposition's report. */
async function oracle(c: OpCase, seed = 1, tolerance = 2e-5) {
  const fused = fusedModel(c);
  const next = rng(seed);
  const feeds: Record<string, ort.Tensor> = {};
  for (const i of c.inputs) if (i !== "") feeds[i.name] = tensor(i, next);
  const { bytes, ops } = decomposeFusedAttention(fused);
  expect(ops).toHaveLength(1);
  expect(ops[0], ops[0]!.reason).toMatchObject({ op: c.op, decomposed: true });
  expect(readOnnxGraph(bytes).nodes.some((n) => n.domain === "com.microsoft")).toBe(false);
  const [a, b] = await Promise.all([ort.InferenceSession.create(fused), ort.InferenceSession.create(bytes)]);
  const [ra, rb] = await Promise.all([a.run(feeds), b.run(feeds)]);
  for (const name of c.outputs.filter(Boolean))
    expect(tensorDiff(ra[name]!, rb[name]!), name).toBeLessThanOrEqual(tolerance);
  // The decomposed graph has one attention softmax the tap returns, rows summing to 1.
  const discovery = discoverAttention(readOnnxGraph(bytes));
  expect(discovery.softmaxes).toHaveLength(1);
  const tapped = await ort.InferenceSession.create(editAttention(bytes, { tap: true }).bytes);
  const probs = (await tapped.run(feeds))["attentions.0"]!;
  const T = probs.dims[3]!;
  const data = probs.data as Float32Array;
  for (let row = 0; row < data.length / T; row++) {
    let sum = 0;
    for (let k = 0; k < T; k++) sum += data[row * T + k]!;
    expect(Math.abs(sum - 1)).toBeLessThanOrEqual(1e-5);
  }
  await Promise.all([a.release(), b.release(), tapped.release()]);
  return { report: ops[0]!, probs, outputs: ra };
}

/** Runs only the decomposition (for layouts ONNX Runtime's CPU kernel does not implement). */
async function decomposedOnly(c: OpCase, variant: string) {
  const next = rng(99);
  const feeds: Record<string, ort.Tensor> = {};
  for (const i of c.inputs) if (i !== "") feeds[i.name] = tensor(i, next);
  const { bytes, ops } = decomposeFusedAttention(fusedModel(c));
  expect(ops[0], ops[0]!.reason).toMatchObject({ decomposed: true, variant: expect.stringContaining(variant) });
  const session = await ort.InferenceSession.create(bytes);
  const out = await session.run(feeds);
  await session.release();
  return out;
}

const f32 = (name: string, dims: number[], data?: number[]): Feed => ({
  name,
  type: "float32",
  dims,
  ...(data ? { data } : {}),
});
const i32 = (name: string, dims: number[], data: number[]): Feed => ({ name, type: "int32", dims, data });
const i64 = (name: string, dims: number[], data: number[]): Feed => ({ name, type: "int64", dims, data });

/** cos/sin caches [maxLen, width] for RoPE with base 10000 over `2·width` rotary channels. */
function ropeCaches(maxLen: number, width: number): [Feed, Feed] {
  const cos: number[] = [];
  const sin: number[] = [];
  for (let p = 0; p < maxLen; p++)
    for (let i = 0; i < width; i++) {
      const angle = p / 10000 ** (i / width);
      cos.push(Math.cos(angle));
      sin.push(Math.sin(angle));
    }
  return [f32("cos_cache", [maxLen, width], cos), f32("sin_cache", [maxLen, width], sin)];
}

describe("GroupQueryAttention, decomposed, equals ONNX Runtime's kernel", () => {
  const N = 4;
  const headSize = 16; // the CPU kernel's rotary wants head sizes in multiples of 16
  const gqa = (o: {
    kv: number;
    S: number;
    P: number;
    packed?: boolean;
    rotary?: "half" | "interleaved";
    rotaryWidth?: number;
    headSize?: number;
    tail?: (Feed | "")[];
    extra?: Record<string, AttributeValue>;
  }): OpCase => {
    const h = o.headSize ?? headSize;
    const total = o.P + o.S;
    const qkv = o.packed
      ? [f32("query", [1, o.S, (N + 2 * o.kv) * h]), "" as const, "" as const]
      : [f32("query", [1, o.S, N * h]), f32("key", [1, o.S, o.kv * h]), f32("value", [1, o.S, o.kv * h])];
    const caches = o.rotary ? ropeCaches(16, o.rotaryWidth ?? h / 2) : (["", ""] as const);
    return {
      op: "GroupQueryAttention",
      inputs: [
        ...qkv,
        f32("past_key", [1, o.kv, o.P, h]),
        f32("past_value", [1, o.kv, o.P, h]),
        i32("seqlens_k", [1], [total - 1]),
        i32("total_sequence_length", [], [total]),
        ...caches,
        ...(o.tail ?? []),
      ],
      outputs: ["output", "present_key", "present_value"],
      attributes: {
        num_heads: { int: N },
        kv_num_heads: { int: o.kv },
        ...(o.rotary ? { do_rotary: { int: 1 }, rotary_interleaved: { int: o.rotary === "interleaved" ? 1 : 0 } } : {}),
        ...o.extra,
      },
    };
  };

  it("first prompt, one KV head per query head, empty past", async () => {
    const { report, probs } = await oracle(gqa({ kv: N, S: 5, P: 0 }));
    expect(report.variant).toContain("separate Q/K/V");
    expect(probs.dims).toEqual([1, N, 5, 5]);
    // Causal: the first query sees only the first key.
    expect((probs.data as Float32Array)[0]).toBeCloseTo(1, 6);
  });

  it("shared KV heads (4 query heads over 2), rotary, decoding one token on a KV cache", async () => {
    const { report } = await oracle(gqa({ kv: 2, S: 1, P: 6, rotary: "half" }), 2);
    expect(report.variant).toMatch(/rotary.*KV cache.*4 query heads over 2 KV heads/);
  });

  it("a second prompt chunk over a non-empty cache, rotary, multi-query (one KV head)", async () => {
    await oracle(gqa({ kv: 1, S: 3, P: 4, rotary: "half" }), 3);
  });

  it("nothing static: head size, scale and rotary width computed in the graph", async () => {
    await oracle({ ...gqa({ kv: 2, S: 3, P: 4, rotary: "half" }), symbolic: true }, 18);
    await oracle({ ...gqa({ kv: 2, S: 4, P: 0, packed: true, rotary: "interleaved" }), symbolic: true }, 19);
  });

  it("packed QKV with interleaved rotary", async () => {
    const { report } = await oracle(gqa({ kv: 2, S: 4, P: 0, packed: true, rotary: "interleaved" }), 4);
    expect(report.variant).toMatch(/packed QKV, rotary \(interleaved\)/);
  });

  it("partial rotary (half the head channels rotate)", async () => {
    await oracle(gqa({ kv: 2, S: 3, P: 2, rotary: "half", headSize: 32, rotaryWidth: 8 }), 5);
  });

  it("a local window (on the prompt and on a cached step)", async () => {
    await oracle(gqa({ kv: 2, S: 6, P: 0, extra: { local_window_size: { int: 2 } } }), 6);
    await oracle(gqa({ kv: 2, S: 1, P: 6, extra: { local_window_size: { int: 3 } } }), 16);
  });

  it("position_ids and an attention bias", async () => {
    const { report } = await oracle(
      gqa({
        kv: 2,
        S: 3,
        P: 2,
        rotary: "half",
        tail: [i64("position_ids", [1, 3], [5, 7, 9]), f32("attention_bias", [1, 4, 3, 5])],
      }),
      17,
    );
    expect(report.variant).toContain("attention_bias");
  });

  it("softcap and a custom scale", async () => {
    await oracle(gqa({ kv: 2, S: 6, P: 0, extra: { softcap: { float: 5 }, scale: { float: 0.2 } } }), 6);
  });

  it("refuses what it cannot rewrite, saying why, from the protobuf alone", () => {
    const c = gqa({ kv: 2, S: 1, P: 1, extra: { smooth_softmax: { int: 1 } } });
    const { ops, bytes } = decomposeFusedAttention(fusedModel(c));
    expect(ops).toEqual([
      expect.objectContaining({
        op: "GroupQueryAttention",
        decomposed: false,
        reason: expect.stringMatching(/smooth_softmax/),
      }),
    ]);
    expect(readOnnxGraph(bytes).nodes[0]!.opType).toBe("GroupQueryAttention");
    const uneven = decomposeFusedAttention(fusedModel(gqa({ kv: 3, S: 1, P: 1 })));
    expect(uneven.ops[0]!.reason).toMatch(/kv_num_heads dividing num_heads/);
  });
});

describe("MultiHeadAttention, decomposed, equals ONNX Runtime's kernel", () => {
  const N = 2;
  const h = 4;
  const D = N * h;

  it("separate Q/K/V with projection bias, causal, on a KV cache", async () => {
    const { report } = await oracle({
      op: "MultiHeadAttention",
      inputs: [
        f32("query", [1, 3, D]),
        f32("key", [1, 3, D]),
        f32("value", [1, 3, D]),
        f32("bias", [3 * D]),
        "",
        "",
        f32("past_key", [1, N, 2, h]),
        f32("past_value", [1, N, 2, h]),
      ],
      outputs: ["output", "present_key", "present_value"],
      attributes: { num_heads: { int: N }, unidirectional: { int: 1 } },
    });
    expect(report.variant).toMatch(/separate Q\/K\/V, bias, KV cache, causal/);
  });

  it("a key padding mask [B, T] and an attention bias, bidirectional (an encoder)", async () => {
    await oracle(
      {
        op: "MultiHeadAttention",
        inputs: [
          f32("query", [2, 4, D]),
          f32("key", [2, 4, D]),
          f32("value", [2, 4, D]),
          "",
          i32("key_padding_mask", [2, 4], [1, 1, 1, 1, 1, 1, 0, 0]),
          f32("attention_bias", [1, N, 4, 4]),
        ],
        outputs: ["output"],
        attributes: { num_heads: { int: N }, scale: { float: 0.3 } },
      },
      7,
    );
  });

  it("key lengths [B] (right padding)", async () => {
    await oracle(
      {
        op: "MultiHeadAttention",
        inputs: [
          f32("query", [2, 3, D]),
          f32("key", [2, 5, D]),
          f32("value", [2, 5, D]),
          "",
          i32("key_padding_mask", [2], [5, 3]),
        ],
        outputs: ["output"],
        attributes: { num_heads: { int: N } },
      },
      8,
    );
  });

  it("cross-attention on cached BNSH key/value", async () => {
    const { report } = await oracle(
      {
        op: "MultiHeadAttention",
        inputs: [f32("query", [1, 2, D]), f32("key", [1, N, 5, h]), f32("value", [1, N, 5, h]), f32("bias", [3 * D])],
        outputs: ["output"],
        attributes: { num_heads: { int: N } },
      },
      9,
    );
    expect(report.variant).toMatch(/cross-attention on cached BNSH/);
  });

  /** `[B, L, N, parts, h]` → the `part`-th `[B, L, N·h]`. */
  const unpack = (data: number[], B: number, L: number, parts: number, part: number) => {
    const out: number[] = [];
    for (let b = 0; b < B; b++)
      for (let l = 0; l < L; l++)
        for (let n = 0; n < N; n++)
          for (let i = 0; i < h; i++) out.push(data[(((b * L + l) * N + n) * parts + part) * h + i]!);
    return out;
  };
  const values = (n: number, seed: number) => Array.from({ length: n }, rng(seed));

  // ONNX Runtime's CPU kernel has no packed layouts ("not implemented for CPU"): the oracle is the kernel on
  // the same numbers unpacked into separate query/key/value, as the contrib-op documentation defines them.
  it("packed KV [B, L, N, 2, h], against the kernel on the same key/value unpacked", async () => {
    const kv = values(5 * D * 2, 10);
    const q = values(3 * D, 11);
    const bias = values(3 * D, 12);
    const attributes = { num_heads: { int: N } };
    const separate = await oracle({
      op: "MultiHeadAttention",
      inputs: [
        f32("query", [1, 3, D], q),
        f32("key", [1, 5, D], unpack(kv, 1, 5, 2, 0)),
        f32("value", [1, 5, D], unpack(kv, 1, 5, 2, 1)),
        f32("bias", [3 * D], bias),
      ],
      outputs: ["output"],
      attributes,
    });
    const packed = await decomposedOnly(
      {
        op: "MultiHeadAttention",
        inputs: [f32("query", [1, 3, D], q), f32("key", [1, 5, N, 2, h], kv), "", f32("bias", [3 * D], bias)],
        outputs: ["output"],
        attributes,
      },
      "packed KV",
    );
    expect(tensorDiff(separate.outputs.output!, packed.output!)).toBeLessThanOrEqual(2e-5);
  });

  it("packed QKV [B, S, N, 3, h], against the kernel on the same query/key/value unpacked", async () => {
    const qkv = values(4 * D * 3, 13);
    const bias = values(3 * D, 14);
    const attributes = { num_heads: { int: N }, unidirectional: { int: 1 } };
    const separate = await oracle({
      op: "MultiHeadAttention",
      inputs: [0, 1, 2]
        .map((p) => f32(["query", "key", "value"][p]!, [1, 4, D], unpack(qkv, 1, 4, 3, p)))
        .concat([f32("bias", [3 * D], bias)]),
      outputs: ["output"],
      attributes,
    });
    const packed = await decomposedOnly(
      {
        op: "MultiHeadAttention",
        inputs: [f32("query", [1, 4, N, 3, h], qkv), "", "", f32("bias", [3 * D], bias)],
        outputs: ["output"],
        attributes,
      },
      "packed QKV",
    );
    expect(tensorDiff(separate.outputs.output!, packed.output!)).toBeLessThanOrEqual(2e-5);
  });
});

describe("Attention (packed QKV weights), decomposed, equals ONNX Runtime's kernel", () => {
  const N = 2;
  const h = 4;
  const Din = 6;

  it("projection and bias, causal, past [2, B, N, P, h] and present", async () => {
    const { report } = await oracle({
      op: "Attention",
      inputs: [
        f32("input", [1, 3, Din]),
        f32("weights", [Din, 3 * N * h]),
        f32("bias", [3 * N * h]),
        "",
        f32("past", [2, 1, N, 4, h]),
      ],
      outputs: ["output", "present"],
      attributes: { num_heads: { int: N }, unidirectional: { int: 1 } },
    });
    expect(report.variant).toMatch(/packed QKV weights, bias, KV cache, causal/);
  });

  it("a raw mask [B, T] on a two-sequence batch (BERT)", async () => {
    await oracle(
      {
        op: "Attention",
        inputs: [
          f32("input", [2, 4, Din]),
          f32("weights", [Din, 3 * N * h]),
          f32("bias", [3 * N * h]),
          i32("mask_index", [2, 4], [1, 1, 1, 1, 1, 1, 1, 0]),
        ],
        outputs: ["output"],
        attributes: { num_heads: { int: N } },
      },
      11,
    );
  });

  it("key lengths [B] and qkv_hidden_sizes with a wider V", async () => {
    await oracle(
      {
        op: "Attention",
        inputs: [
          f32("input", [2, 3, Din]),
          f32("weights", [Din, 2 * N * h + 2 * N * h]),
          f32("bias", [4 * N * h]),
          i32("mask_index", [2], [3, 2]),
        ],
        outputs: ["output"],
        attributes: { num_heads: { int: N }, qkv_hidden_sizes: { ints: [N * h, N * h, 2 * N * h] } },
      },
      12,
    );
  });
});
