import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { afterAll, describe, expect, it } from "vitest";
import { CapabilityError } from "../core/capability.ts";
import { mergeAsIf } from "./fixtures/merge-if.ts";
import { formatInspection, inspectModel, inspectOnnxFile } from "./inspect.ts";
import { resolveLayout } from "./layout.ts";
import { loadModel, REPO_ROOT } from "./load.node.ts";
import { nodeFiles } from "./ort-session.node.ts";
import { MissingFileError, type FileSource } from "./session.ts";
import { getSpec, inferSpec, textConfig } from "./specs/index.ts";

const LAYOUTS = `${REPO_ROOT}src/models/fixtures/layouts/`;
const dir = mkdtempSync(join(tmpdir(), "evalrx-inspect-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

/** A folder made of other folders' files: `files` maps target path → source path. */
function folder(name: string, config: Record<string, unknown>, files: Record<string, string>): string {
  const path = join(dir, name);
  mkdirSync(join(path, "onnx"), { recursive: true });
  writeFileSync(join(path, "config.json"), JSON.stringify(config));
  for (const [to, from] of Object.entries(files)) copyFileSync(from, join(path, to));
  return path;
}

/** A file source that cannot list (like fetched files): the layout is found by reading. */
function unlisted(path: string): { files: FileSource; read: string[] } {
  const inner = nodeFiles(path);
  const read: string[] = [];
  return { read, files: (p) => (read.push(p), inner(p)) };
}

describe("inspecting a model folder (config files and protobufs, no session)", () => {
  it("a bundled model: registered spec, exported attention, every capability", async () => {
    const r = await inspectModel(nodeFiles(`${REPO_ROOT}models/tiny-lm`), {
      key: "tiny-lm",
      spec: getSpec("tiny-lm")!,
    });
    expect(r).toMatchObject({ registered: true, kind: "decoder", family: "llama", runtime: { runs: true } });
    expect([...r.capabilities].sort()).toEqual(["attention", "attention_write", "generate", "hidden_states", "logits"]);
    expect(r.attention).toMatchObject({ source: "exported", found: 2, layers: 2, readable: true, writable: true });
    expect(r.files.map((f) => [f.path, f.role, f.dtype])).toEqual([["onnx/model.onnx", "decoder", "fp32"]]);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r); // plain data: survives JSON (and a worker) unchanged
  });

  it("a folder holding only onnx/decoder_model_merged.onnx loads, feeds use_cache_branch, and generates", async () => {
    const path = `${LAYOUTS}lm-merged`;
    const r = await inspectModel(nodeFiles(path));
    expect(r.files.map((f) => f.path)).toEqual(["onnx/decoder_model_merged.onnx"]);
    expect(r.attention.sites[0]!.places.map((p) => p.where)).toEqual([
      "If 'optimum::if' then_branch",
      "If 'optimum::if' else_branch",
    ]);
    const ref = json(`${path}/reference.json`) as { prompt_step: { logits: number[]; attentions: number[][] } };
    const model = await loadModel(path);
    try {
      const prompt = "reverse 3 1 5 =";
      const trace = await model.forward({ prompt }, { reductions: ["fullAttention"], logitsAt: [-1] });
      const T = trace.tokenIds.length;
      const full = trace.reductions.fullAttention!;
      for (let l = 0; l < 2; l++) {
        const mine = full.data.subarray(l * 2 * T * T, (l + 1) * 2 * T * T);
        expect(mine.reduce((m, v, i) => Math.max(m, Math.abs(v - ref.prompt_step.attentions[l]![i]!)), 0)).toBeLessThan(
          1e-5,
        );
      }
      // Greedy generation on the cache (the then branch) agrees with recomputing every step (the else branch).
      const g = await model.generateTokens({ prompt }, { maxNewTokens: 5 });
      const session = await ort.InferenceSession.create(readFileSync(`${path}/onnx/decoder_model_merged.onnx`));
      const ids = model.codec.encode(prompt, true);
      const empty = () => new ort.Tensor("float32", new Float32Array(0), [1, 2, 0, 8]);
      for (let i = 0; i < g.ids.length; i++) {
        const n = ids.length;
        const feeds: Record<string, ort.Tensor> = {
          input_ids: new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, n]),
          attention_mask: new ort.Tensor("int64", new BigInt64Array(n).fill(1n), [1, n]),
          position_ids: new ort.Tensor(
            "int64",
            BigInt64Array.from({ length: n }, (_, j) => BigInt(j)),
            [1, n],
          ),
          use_cache_branch: new ort.Tensor("bool", Uint8Array.of(0), [1]),
        };
        for (let l = 0; l < 2; l++) for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${kv}`] = empty();
        const logits = (await session.run(feeds)).logits!.data as Float32Array;
        const last = logits.subarray((n - 1) * 16, n * 16);
        expect(last.indexOf(Math.max(...last)), `token ${i}`).toBe(g.ids[i]);
        ids.push(g.ids[i]!);
      }
      await session.release();
    } finally {
      await model.dispose();
    }
  });

  it("a merged decoder at tiny-lm's size (its graph as both If branches) answers and attends as tiny-lm does", async () => {
    const tiny = `${REPO_ROOT}models/tiny-lm/`;
    const path = folder("tiny-merged", json(`${tiny}config.json`), {
      "tokenizer.json": `${tiny}tokenizer.json`,
      "tokenizer_config.json": `${tiny}tokenizer_config.json`,
    });
    writeFileSync(
      join(path, "onnx/decoder_model_merged.onnx"),
      mergeAsIf(new Uint8Array(readFileSync(`${tiny}onnx/model_untapped.onnx`))),
    );
    const [merged, plain] = await Promise.all([loadModel(path), loadModel("tiny-lm")]);
    try {
      const input = { prompt: "reverse 4 8 1 5 =" };
      expect((await merged.generateTokens(input, { maxNewTokens: 8 })).ids).toEqual(
        (await plain.generateTokens(input, { maxNewTokens: 8 })).ids,
      );
      const [a, b] = await Promise.all([merged, plain].map((m) => m.forward(input, { reductions: ["fullAttention"] })));
      const diff = a!.reductions.fullAttention!.data.reduce(
        (m, v, i) => Math.max(m, Math.abs(v - b!.reductions.fullAttention!.data[i]!)),
        0,
      );
      expect(diff).toBeLessThanOrEqual(1e-5);
    } finally {
      await Promise.all([merged.dispose(), plain.dispose()]);
    }
  });

  it("dtype variants: the asked one when there, fp32 by default, any other when that is all there is", async () => {
    const tiny = `${REPO_ROOT}models/tiny-lm/`;
    const base = { "tokenizer.json": `${tiny}tokenizer.json`, "tokenizer_config.json": `${tiny}tokenizer_config.json` };
    const config = json(`${tiny}config.json`);
    const only = folder("quantized-only", config, {
      ...base,
      "onnx/model_quantized.onnx": `${tiny}onnx/model_untapped.onnx`,
    });
    const r = await inspectModel(nodeFiles(only));
    expect(r.files.map((f) => [f.path, f.dtype])).toEqual([["onnx/model_quantized.onnx", "q8"]]);
    expect(r.attention).toMatchObject({ source: "tapped", found: 2 });
    const both = folder("both", config, {
      ...base,
      "onnx/model.onnx": `${tiny}onnx/model.onnx`,
      "onnx/model_fp16.onnx": `${tiny}onnx/model_untapped.onnx`,
    });
    expect((await inspectModel(nodeFiles(both))).files[0]!.path).toBe("onnx/model.onnx");
    const fp16 = await inspectModel(nodeFiles(both), { dtype: "fp16" });
    expect(fp16.files[0]!.path).toBe("onnx/model_fp16.onnx");
    const q4 = await inspectModel(nodeFiles(both), { dtype: "q4" });
    expect(q4.files[0]!.path).toBe("onnx/model.onnx");
    expect(q4.notes).toContain("onnx/model.onnx: no q4 variant, took fp32");
    // Without a listing (fetched files) the candidates are read in order; the hit is not read again.
    const { files, read } = unlisted(only);
    const layout = await resolveLayout(files, config);
    expect(layout.files[0]!.bytes!.length).toBeGreaterThan(0);
    expect(read).toEqual(["onnx/model.onnx", "onnx/model_fp16.onnx", "onnx/model_quantized.onnx"]);
    await expect(inspectModel(nodeFiles(only), { dtype: "fp8" })).rejects.toThrow(
      /dtype 'fp8' is not one transformers\.js names/,
    );
    const model = await loadModel(only);
    expect(await model.generate({ prompt: "reverse 1 2 =" }, { maxNewTokens: 3 })).toMatch(/^[\d ]*$/);
    await model.dispose();
  });

  it("an encoder-only model (BERT naming) does not claim generate; its forward reads attention without logits", async () => {
    const path = `${LAYOUTS}bert-encoder`;
    const r = await inspectModel(nodeFiles(path));
    expect(r.kind).toBe("encoder");
    expect([...r.capabilities].sort()).toEqual(["attention", "attention_write"]);
    expect(r.spec!.capabilities).toEqual(r.capabilities);
    const model = await loadModel(path);
    try {
      await expect(model.generate({ prompt: "1 2" })).rejects.toThrow(CapabilityError);
      await expect(model.generate({ prompt: "1 2" })).rejects.toThrow(/encoder-only model.*cannot provide 'generate'/);
      const ref = json(`${path}/reference.json`) as { unpadded_attentions: number[][] };
      const trace = await model.forward(
        { prompt: "reverse 3 1 5 =" },
        { reductions: ["fullAttention", "attentionEntropy"] },
      );
      expect(trace.reductions.attentionEntropy!.shape).toEqual([2, 2]);
      const full = trace.reductions.fullAttention!;
      expect(full.shape).toEqual([2, 2, 6, 6]);
      for (let l = 0; l < 2; l++) {
        const mine = full.data.subarray(l * 72, (l + 1) * 72);
        expect(mine.reduce((m, v, i) => Math.max(m, Math.abs(v - ref.unpadded_attentions[l]![i]!)), 0)).toBeLessThan(
          1e-5,
        );
      }
      await expect(model.forward({ prompt: "1" }, { logitsAt: [-1] })).rejects.toThrow(/no logits output/);
    } finally {
      await model.dispose();
    }
  });

  it("encoder + merged decoder (BART naming): both graphs read, the ort runtime says it does not run it", async () => {
    const path = `${LAYOUTS}seq2seq`;
    const r = await inspectModel(nodeFiles(path));
    expect(r.kind).toBe("encoder-decoder");
    expect(r.files.map((f) => [f.path, f.role, f.attention?.found, f.attention?.expected])).toEqual([
      ["onnx/encoder_model.onnx", "encoder", 2, 2],
      ["onnx/decoder_model_merged.onnx", "decoder", 4, 4],
    ]);
    expect(r.attention.file).toBe("onnx/decoder_model_merged.onnx");
    expect(r.capabilities).toEqual([]);
    expect(r.runtime.reason).toMatch(/bart is an encoder-decoder: generate with the transformers backend/);
    await expect(loadModel(path)).rejects.toThrow(/cannot be run by the ort runtime: .*encoder-decoder/);
  });

  const vlm = `${REPO_ROOT}models/tiny-vlm/`;
  const vlmFiles = {
    "onnx/vision_encoder.onnx": `${vlm}onnx/vision_encoder.onnx`,
    "onnx/embed_tokens.onnx": `${vlm}onnx/embed_tokens.onnx`,
    "onnx/decoder_model_merged.onnx": `${vlm}onnx/decoder_untapped.onnx`,
  };
  const textConfigOf = {
    model_type: "llama",
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 4,
    hidden_size: 64,
    vocab_size: 64,
    max_position_embeddings: 128,
  };
  for (const [family, extra, more] of [
    ["idefics3", { image_token_id: 4 }, {}],
    ["qwen2_vl", { image_token_id: 4 }, {}],
    ["llava_onevision", { image_token_index: 4 }, {}],
    ["moondream1", {}, {}],
    [
      "florence2",
      { is_encoder_decoder: true },
      { "onnx/encoder_model.onnx": `${LAYOUTS}bert-encoder/onnx/model.onnx` },
    ],
  ] as const)
    it(`the VLM split as ${family} publishes it: vision encoder, embeddings, decoder read; attention found`, async () => {
      const config = {
        model_type: family,
        ...extra,
        vision_config: { num_hidden_layers: 1, num_attention_heads: 4 },
        text_config: textConfigOf,
      };
      const r = await inspectModel(nodeFiles(folder(`vlm-${family}`, config, { ...vlmFiles, ...more })));
      expect(r.kind).toBe("image-text");
      expect(r.files.map((f) => f.role)).toEqual(
        family === "florence2"
          ? ["vision_encoder", "embed_tokens", "encoder", "decoder"]
          : ["vision_encoder", "embed_tokens", "decoder"],
      );
      expect(r.attention).toMatchObject({ file: "onnx/decoder_model_merged.onnx", found: 2, readable: true });
      expect(r.files[0]!.attention!.found).toBe(1); // the vision encoder's one ViT block
      expect(r.spec!.modalities).toContain("image");
      expect(r.runtime.reason).toMatch(new RegExp(`llava-layout models only; ${family}'s processor`));
    });

  it("a single .onnx file: what the graph holds, without a config", () => {
    const r = inspectOnnxFile(
      new Uint8Array(readFileSync(`${LAYOUTS}lm-merged/onnx/decoder_model_merged.onnx`)),
      "decoder_model_merged.onnx",
    );
    expect(r.attention.found).toBe(2);
    expect(r.capabilities).toEqual(["logits", "attention", "attention_write"]);
    expect(r.runtime.runs).toBe(false);
  });

  it("prints a report a person can read", async () => {
    const text = formatInspection(await inspectModel(nodeFiles(`${LAYOUTS}lm-functions`)));
    expect(text).toMatch(/^.* — gpt2 \(decoder\), spec inferred from config\.json$/m);
    expect(text).toContain("attention: 2 of 2 layers (tapped: main graph)");
    expect(text).toContain("function __main__.Attention: inlined at 2 call(s)");
  });

  it("a folder without its decoder says which files it looked for", async () => {
    const path = folder("no-graph", json(`${REPO_ROOT}models/tiny-lm/config.json`), {});
    const r = await inspectModel(nodeFiles(path));
    expect(r.missing).toEqual([
      { role: "decoder", tried: ["onnx/model*.onnx", "onnx/decoder_model_merged*.onnx", "onnx/decoder_model*.onnx"] },
    ]);
    expect(r.attention.reason).toMatch(/no decoder file: looked for onnx\/model\*\.onnx/);
    await expect(loadModel(path)).rejects.toThrow(/lacks its decoder graph/);
  });
});

describe("spec inference reads the families' own names", () => {
  it("T5 (relative positions), Whisper and BART (decoder sizes), GPT-2, BERT", () => {
    const t5 = {
      model_type: "t5",
      num_layers: 6,
      num_decoder_layers: 6,
      num_heads: 8,
      d_model: 512,
      d_kv: 64,
      vocab_size: 32128,
      relative_attention_num_buckets: 32,
      is_encoder_decoder: true,
    };
    expect(textConfig(t5)).toMatchObject({
      layers: 6,
      heads: 8,
      headDim: 64,
      contextLength: Number.MAX_SAFE_INTEGER,
      encoder: { layers: 6, heads: 8 },
    });
    expect(textConfig({ ...t5, n_positions: 512 }).contextLength).toBe(512);
    const whisper = {
      model_type: "whisper",
      num_hidden_layers: 4,
      encoder_layers: 4,
      decoder_layers: 2,
      encoder_attention_heads: 6,
      decoder_attention_heads: 3,
      d_model: 384,
      vocab_size: 51865,
      max_target_positions: 448,
      max_source_positions: 1500,
    };
    expect(textConfig(whisper)).toMatchObject({
      layers: 2,
      heads: 3,
      headDim: 128,
      contextLength: 448,
      contextFrom: "max_target_positions",
      encoder: { layers: 4, heads: 6 },
    });
    const bart = json(`${LAYOUTS}seq2seq/config.json`);
    expect(textConfig(bart)).toMatchObject({ layers: 2, heads: 2, hiddenSize: 16, encoder: { layers: 2, heads: 2 } });
    expect(inferSpec("bart", "x", bart).capabilities.has("generate")).toBe(true);
    const bert = json(`${LAYOUTS}bert-encoder/config.json`);
    expect([...inferSpec("bert", "x", bert).capabilities]).toEqual([]);
    const sizes = { num_hidden_layers: 1, num_attention_heads: 1, hidden_size: 8, vocab_size: 4 };
    const undeclared = textConfig({ model_type: "x", ...sizes });
    expect(undeclared.contextLength).toBe(Number.MAX_SAFE_INTEGER);
    expect(undeclared.contextFrom).toMatch(
      /^not declared in config\.json \(looked for max_position_embeddings, n_positions/,
    );
    expect(textConfig({ model_type: "rwkv", ...sizes, context_length: 1024 }).contextLength).toBe(1024);
  });

  it("an inferred spec never claims attention: only the graph can say", () => {
    const spec = inferSpec("gpt2", "openai-community/gpt2", json(`${LAYOUTS}lm-merged/config.json`));
    expect([...spec.capabilities].sort()).toEqual(["generate", "logits"]);
  });

  it("a FileSource that fails for another reason than a missing file is not taken for a missing file", async () => {
    const broken: FileSource = async (p) => {
      if (p === "config.json")
        return new TextEncoder().encode(JSON.stringify(json(`${REPO_ROOT}models/tiny-lm/config.json`)));
      if (p.endsWith(".onnx")) throw new Error("network down");
      throw new MissingFileError(p, "here");
    };
    await expect(inspectModel(broken)).rejects.toThrow("network down");
  });
});
