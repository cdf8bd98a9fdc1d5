import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { describeAttention } from "./attention-status.ts";
import { maxAbsDiff } from "./fixtures/max-abs-diff.ts";
import { REPO_ROOT } from "./load.node.ts";
import { buildOnnxModel } from "./onnx-build.ts";
import { DTYPE } from "./onnx-read.ts";
import { encodeAttribute } from "./onnx-write.ts";
import { prepareAttention } from "./prepare-attention.ts";

/**
 * The layouts real exports use (made by src/models/fixtures/make_layouts.py
 * with torch.onnx): the attention the runtime reads equals PyTorch's own
 * probabilities, committed in each fixture's reference.json.
 */
const FIXTURES = `${REPO_ROOT}src/models/fixtures/layouts/`;
const read = (path: string) => new Uint8Array(readFileSync(`${FIXTURES}${path}`));
const reference = (name: string) => JSON.parse(readFileSync(`${FIXTURES}${name}/reference.json`, "utf8"));
const H = 2;
const HD = 8;
const L = 2;

const ids = (values: readonly number[]) =>
  new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), [1, values.length]);
const ones = (n: number) => new ort.Tensor("int64", new BigInt64Array(n).fill(1n), [1, n]);
const positions = (from: number, n: number) =>
  new ort.Tensor(
    "int64",
    BigInt64Array.from({ length: n }, (_, i) => BigInt(from + i)),
    [1, n],
  );
const empty = () => new ort.Tensor("float32", new Float32Array(0), [1, H, 0, HD]);

/** A decoder's feeds for the prompt with an empty past (and use_cache_branch false when it takes one). */
function promptFeeds(session: ort.InferenceSession, prompt: readonly number[]): Record<string, ort.Tensor> {
  const T = prompt.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: ids(prompt),
    attention_mask: ones(T),
    position_ids: positions(0, T),
  };
  for (let l = 0; l < L; l++) for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${kv}`] = empty();
  if (session.inputNames.includes("use_cache_branch"))
    feeds.use_cache_branch = new ort.Tensor("bool", Uint8Array.of(0), [1]);
  return feeds;
}

/** The prompt without cache, then one cached step, as the decoder-only fixtures' reference has them. */
async function runLm(bytes: Uint8Array) {
  const session = await ort.InferenceSession.create(bytes);
  const ref = reference(currentLm);
  const T = ref.prompt.length;
  const merged = session.inputNames.includes("use_cache_branch");
  const first = await session.run(promptFeeds(session, ref.prompt));
  const step: Record<string, ort.Tensor> = {
    input_ids: ids([ref.next]),
    attention_mask: ones(T + 1),
    position_ids: positions(T, 1),
  };
  for (let l = 0; l < L; l++)
    for (const kv of ["key", "value"]) step[`past_key_values.${l}.${kv}`] = first[`present.${l}.${kv}`]!;
  if (merged) step.use_cache_branch = new ort.Tensor("bool", Uint8Array.of(1), [1]);
  const second = await session.run(step);
  await session.release();
  return { ref, first, second };
}
let currentLm = "";

async function expectLmMatchesReference(name: string, file: string) {
  currentLm = name;
  const prepared = prepareAttention(read(`${name}/onnx/${file}`), { file: `onnx/${file}`, heads: H, layers: L });
  const { ref, first, second } = await runLm(prepared.bytes);
  for (const [out, want] of [
    [first, ref.prompt_step],
    [second, ref.cached_step],
  ] as const) {
    expect(maxAbsDiff(out.logits!.data as Float32Array, want.logits)).toBeLessThanOrEqual(2e-5);
    for (let l = 0; l < L; l++) {
      expect(out[`attentions.${l}`]!.dims).toEqual(want.attention_shape);
      expect(maxAbsDiff(out[`attentions.${l}`]!.data as Float32Array, want.attentions[l])).toBeLessThanOrEqual(1e-5);
    }
  }
  return prepared.status;
}

describe("attention read from the layouts exports use, equal to PyTorch's", () => {
  it("batched 3-D attention at opset 11 (Softmax axis 2), returned as [batch, heads, q, k]", async () => {
    const status = await expectLmMatchesReference("lm-3d-opset11", "model.onnx");
    expect(status).toMatchObject({ source: "tapped", found: 2, layers: 2, readable: true, writable: true });
    expect(status.sites.map((s) => s.places.map((p) => p.layout))).toEqual([["3-D batched"], ["3-D batched"]]);
    expect(status.reason).toBeUndefined();
  });

  it("attention inside ONNX local functions (inlined)", async () => {
    const status = await expectLmMatchesReference("lm-functions", "model.onnx");
    expect(status.inlined).toEqual([{ function: "__main__.Attention", calls: 2 }]);
    expect(status.sites[0]!.places[0]!.origin).toMatch(/^function __main__\.Attention, inlined from the call/);
  });

  it("a merged decoder: both If branches tapped, use_cache_branch false then true", async () => {
    const status = await expectLmMatchesReference("lm-merged", "decoder_model_merged.onnx");
    expect(status.found).toBe(2);
    expect(status.sites.map((s) => s.places.map((p) => p.where))).toEqual([
      ["If 'optimum::if' then_branch", "If 'optimum::if' else_branch"],
      ["If 'optimum::if' then_branch", "If 'optimum::if' else_branch"],
    ]);
    expect(describeAttention(status)).toBe(
      "2 of 2 layers (tapped: If 'optimum::if' then_branch; If 'optimum::if' else_branch)",
    );
  });

  it("an encoder-only (BERT-style) graph with a padding mask", async () => {
    const ref = reference("bert-encoder");
    const { bytes, status } = prepareAttention(read("bert-encoder/onnx/model.onnx"), { heads: H, layers: L });
    expect(status.found).toBe(2);
    const session = await ort.InferenceSession.create(bytes);
    const T = ref.prompt.length;
    const out = await session.run({
      input_ids: ids(ref.prompt),
      attention_mask: new ort.Tensor("int64", BigInt64Array.from(ref.attention_mask.map(BigInt)), [1, T]),
      token_type_ids: new ort.Tensor("int64", new BigInt64Array(T), [1, T]),
    });
    expect(maxAbsDiff(out.last_hidden_state!.data as Float32Array, ref.last_hidden_state)).toBeLessThanOrEqual(2e-5);
    for (let l = 0; l < L; l++)
      expect(maxAbsDiff(out[`attentions.${l}`]!.data as Float32Array, ref.attentions[l])).toBeLessThanOrEqual(1e-5);
    await session.release();
  });

  it("encoder + merged decoder (BART naming): encoder self-attention, decoder self- and cross-attention", async () => {
    const ref = reference("seq2seq");
    const encoder = prepareAttention(read("seq2seq/onnx/encoder_model.onnx"), { heads: H, layers: L });
    const decoder = prepareAttention(read("seq2seq/onnx/decoder_model_merged.onnx"), {
      heads: H,
      layers: L,
      expected: 2 * L,
    });
    expect([encoder.status.found, decoder.status.found, decoder.status.expected]).toEqual([2, 4, 4]);
    expect(decoder.status.reason).toBeUndefined();
    const [enc, dec] = await Promise.all([
      ort.InferenceSession.create(encoder.bytes),
      ort.InferenceSession.create(decoder.bytes),
    ]);
    const T = ref.prompt.length;
    const e = await enc.run({ input_ids: ids(ref.prompt), attention_mask: ones(T) });
    for (let l = 0; l < L; l++)
      expect(maxAbsDiff(e[`attentions.${l}`]!.data as Float32Array, ref.encoder.attentions[l])).toBeLessThanOrEqual(
        1e-5,
      );
    const feeds: Record<string, ort.Tensor> = {
      input_ids: ids([ref.decoder_start]),
      encoder_attention_mask: ones(T),
      encoder_hidden_states: e.last_hidden_state!,
      use_cache_branch: new ort.Tensor("bool", Uint8Array.of(0), [1]),
    };
    for (let l = 0; l < L; l++)
      for (const part of ["decoder", "encoder"])
        for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${part}.${kv}`] = empty();
    const first = await dec.run(feeds);
    const step: Record<string, ort.Tensor> = {
      ...feeds,
      input_ids: ids([ref.next]),
      use_cache_branch: new ort.Tensor("bool", Uint8Array.of(1), [1]),
    };
    for (let l = 0; l < L; l++)
      for (const part of ["decoder", "encoder"])
        for (const kv of ["key", "value"])
          step[`past_key_values.${l}.${part}.${kv}`] = first[`present.${l}.${part}.${kv}`]!;
    const second = await dec.run(step);
    for (const [out, want] of [
      [first, ref.first_step],
      [second, ref.cached_step],
    ] as const) {
      expect(maxAbsDiff(out.logits!.data as Float32Array, want.logits)).toBeLessThanOrEqual(2e-5);
      for (let i = 0; i < 2 * L; i++)
        expect(maxAbsDiff(out[`attentions.${i}`]!.data as Float32Array, want.attentions[i])).toBeLessThanOrEqual(1e-5);
    }
    await Promise.all([enc.release(), dec.release()]);
  });
});

describe("the attention-bias edit reaches the same places", () => {
  for (const [name, file] of [
    ["lm-merged", "decoder_model_merged.onnx"],
    ["lm-3d-opset11", "model.onnx"],
    ["lm-functions", "model.onnx"],
  ] as const)
    it(`${name}: a zero bias changes nothing, a positive bias on key 1 raises its attention in every layer`, async () => {
      currentLm = name;
      const { bytes, biasInputs } = prepareAttention(read(`${name}/onnx/${file}`), { heads: H, layers: L, bias: true });
      expect(biasInputs).toEqual(["attention_bias.0", "attention_bias.1"]);
      const session = await ort.InferenceSession.create(bytes);
      const ref = reference(name);
      const T = ref.prompt.length;
      const base = promptFeeds(session, ref.prompt);
      const bias = (value: number) => {
        const data = new Float32Array(H * T);
        for (let h = 0; h < H; h++) data[h * T + 1] = value;
        return Object.fromEntries(biasInputs.map((n) => [n, new ort.Tensor("float32", data, [1, H, 1, T])]));
      };
      const zero = await session.run({ ...base, ...bias(0) });
      expect(maxAbsDiff(zero.logits!.data as Float32Array, ref.prompt_step.logits)).toBeLessThanOrEqual(2e-5);
      const up = await session.run({ ...base, ...bias(4) });
      for (let l = 0; l < L; l++) {
        const last = (out: typeof up) => (out[`attentions.${l}`]!.data as Float32Array)[(T - 1) * T + 1]!;
        expect(last(up)).toBeGreaterThan(last(zero));
      }
      await session.release();
    });
});

describe("the status says what cannot be read, where and why, from the protobuf", () => {
  it("a decoder whose attention is one fused MultiHeadAttention is decomposed and then read", () => {
    const { status } = prepareAttention(
      new Uint8Array(readFileSync(`${REPO_ROOT}src/models/fixtures/fused-lm/onnx/model.onnx`)),
      {
        heads: 2,
        layers: 1,
      },
    );
    expect(status).toMatchObject({ source: "decomposed", found: 1, readable: true, writable: true });
    expect(status.fused).toEqual([
      expect.objectContaining({ op: "MultiHeadAttention", decomposed: true, where: "main graph" }),
    ]);
    expect(status.sites[0]!.places[0]!.origin).toMatch(/^decomposed MultiHeadAttention/);
  });

  it("an op it cannot decompose: which op, where, why, and what to do", () => {
    const model = buildOnnxModel({
      opset: 17,
      domains: { "com.microsoft": 1 },
      inputs: [
        { name: "q", elemType: DTYPE.float, dims: [1, 1, 32] },
        { name: "k", elemType: DTYPE.float, dims: [1, 1, 16] },
        { name: "v", elemType: DTYPE.float, dims: [1, 1, 16] },
        { name: "seqlens_k", elemType: DTYPE.int32, dims: [1] },
        { name: "total", elemType: DTYPE.int32, dims: [] },
      ],
      outputs: [{ name: "out", elemType: DTYPE.float }],
      nodes: [
        {
          opType: "GroupQueryAttention",
          domain: "com.microsoft",
          name: "layer0/gqa",
          inputs: ["q", "k", "v", "", "", "seqlens_k", "total"],
          outputs: ["out"],
          attributes: [
            encodeAttribute("num_heads", { int: 4 }),
            encodeAttribute("kv_num_heads", { int: 2 }),
            encodeAttribute("smooth_softmax", { int: 1 }),
          ],
        },
      ],
    });
    const { status, bytes } = prepareAttention(model, { file: "onnx/model.onnx", layers: 1 });
    expect(bytes).toBe(model);
    expect(status).toMatchObject({
      source: "unreadable",
      found: 0,
      readable: false,
      writable: false,
      file: "onnx/model.onnx",
    });
    expect(status.fused).toEqual([
      expect.objectContaining({
        op: "GroupQueryAttention",
        node: "layer0/gqa",
        where: "main graph",
        decomposed: false,
      }),
    ]);
    expect(status.reason).toMatch(
      /GroupQueryAttention 'layer0\/gqa' \(main graph\) was not decomposed: not decomposed: smooth_softmax/,
    );
    expect(status.advice).toMatch(/re-export the model without ONNX Runtime's attention fusion/);
    expect(describeAttention(status)).toMatch(/^not readable: GroupQueryAttention 'layer0\/gqa'/);
  });

  it("a graph with no attention softmax at all", () => {
    const model = buildOnnxModel({
      opset: 17,
      inputs: [{ name: "x", elemType: DTYPE.float, dims: [2] }],
      outputs: [{ name: "y", elemType: DTYPE.float, dims: [2] }],
      nodes: [{ opType: "Relu", inputs: ["x"], outputs: ["y"], name: "relu" }],
    });
    const { status } = prepareAttention(model, { layers: 2 });
    expect(status.reason).toMatch(/no Softmax over the key axis between two MatMuls/);
    expect(status.advice).toMatch(/eager attention/);
  });
});
