import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encode as encodePng } from "fast-png";
import { loadModel, REPO_ROOT } from "./load.node.ts";
import type { OrtModel } from "./ort-model.ts";

const demo = (path: string) => new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${path}`));
const firstCase = JSON.parse(readFileSync(`${REPO_ROOT}public/demo/pope.jsonl`, "utf8").split("\n")[0]!) as {
  input: { prompt: string; image: string };
};
const input = { prompt: firstCase.input.prompt, image: demo(firstCase.input.image) };

let vlm: OrtModel;
let lm: OrtModel;
beforeAll(async () => {
  [vlm, lm] = await Promise.all([loadModel("tiny-vlm"), loadModel("tiny-lm")]);
});
afterAll(async () => {
  await Promise.all([vlm?.dispose(), lm?.dispose()]);
});

describe("generation", () => {
  it("generates greedily with a KV cache, the same as a full recompute", async () => {
    const cached = await vlm.generateTokens(input, { maxNewTokens: 6 });
    expect(cached.ids.length).toBeGreaterThan(0);
    // Teacher-force the generated tokens in one pass: each greedy choice must be the argmax there too.
    const answer = vlm.codec.decode(cached.ids);
    const trace = await vlm.forward(input, { answer, logitsAt: cached.ids.map((_, i) => cached.promptLength - 1 + i) });
    const { values, vocab } = trace.logits!;
    cached.ids.forEach((id, i) => {
      const row = values.subarray(i * vocab, (i + 1) * vocab);
      expect(row.indexOf(Math.max(...row))).toBe(id);
    });
  });

  it("samples reproducibly from a seed, and differently across seeds", async () => {
    const a = await lm.generateTokens({ prompt: "1 2 3 4 5" }, { temperature: 5, seed: 7, maxNewTokens: 12 });
    const b = await lm.generateTokens({ prompt: "1 2 3 4 5" }, { temperature: 5, seed: 7, maxNewTokens: 12 });
    expect(b.ids).toEqual(a.ids);
    const others = await Promise.all(
      [1, 2, 3, 4].map((seed) =>
        lm.generateTokens({ prompt: "1 2 3 4 5" }, { temperature: 5, seed, maxNewTokens: 12 }),
      ),
    );
    expect(others.some((o) => o.ids.join() !== a.ids.join())).toBe(true);
  });

  it("stops at max tokens and at stop strings", async () => {
    const g = await lm.generateTokens({ prompt: "1 2 3" }, { temperature: 5, seed: 1, maxNewTokens: 3 });
    expect(g.ids.length).toBeLessThanOrEqual(3);
    const none = await lm.generateTokens({ prompt: "1 2 3" }, { maxNewTokens: 0 });
    expect(none).toMatchObject({ ids: [], text: "", stop: "max_tokens" });
    const full = await lm.generateTokens({ prompt: "1 2 3 4 5 6" }, { temperature: 5, seed: 3, maxNewTokens: 8 });
    const words = full.text.split(" ");
    if (words.length >= 2) {
      const cut = await lm.generateTokens(
        { prompt: "1 2 3 4 5 6" },
        { temperature: 5, seed: 3, maxNewTokens: 8, stop: [words[1]!] },
      );
      expect(cut.stop).toBe("stop_string");
      expect(cut.text).not.toContain(words[1]);
    }
  });

  it("stops when cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(vlm.generate(input, { signal: controller.signal })).rejects.toThrow(/cancelled/);
  });
});

describe("forward with capture", () => {
  it("returns tokens, image positions and only the asked reductions, with their shapes", async () => {
    const trace = await vlm.forward(input, {
      answer: "yes",
      reductions: [
        "imageAttentionShare",
        "attentionEntropy",
        "sinkMass",
        "imageAttentionMap",
        "rollout",
        "tokenEntropy",
        "tokenLogprob",
        "logitLens",
      ],
    });
    const { layers, heads, image } = vlm.spec;
    const [rows, cols] = image!.grid;
    expect(trace.imagePositions.length).toBe(rows * cols);
    expect(trace.tokens.filter((t) => t === "<image>").length).toBe(rows * cols);
    expect(trace.answerPositions).toEqual(Int32Array.of(trace.tokenIds.length - 1));
    const r = trace.reductions;
    expect(r.imageAttentionShare!.shape).toEqual([layers, heads]);
    for (const v of r.imageAttentionShare!.data) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1 + 1e-5);
    }
    expect(r.sinkMass!.shape).toEqual([layers, heads]);
    expect(r.attentionEntropy!.shape).toEqual([layers, heads]);
    expect(r.imageAttentionMap!.shape).toEqual([layers, rows, cols]);
    // Per layer, the map sums to that layer's head-mean image share from the last prompt token (= the one query here).
    for (let l = 0; l < layers; l++) {
      const map = r.imageAttentionMap!.data.subarray(l * rows * cols, (l + 1) * rows * cols).reduce((a, b) => a + b, 0);
      const share = r.imageAttentionShare!.data.subarray(l * heads, (l + 1) * heads).reduce((a, b) => a + b, 0) / heads;
      expect(map).toBeCloseTo(share, 5);
    }
    expect(r.rollout!.shape).toEqual([rows, cols]);
    const rolled = r.rollout!.data.reduce((a, b) => a + b, 0);
    expect(rolled).toBeGreaterThan(0);
    expect(rolled).toBeLessThanOrEqual(1 + 1e-5);
    expect(r.tokenEntropy!.shape).toEqual([trace.tokenIds.length]);
    expect(Number.isNaN(r.tokenLogprob!.data[0])).toBe(true);
    expect(r.tokenLogprob!.data.slice(1).every((v) => v <= 0)).toBe(true);
    expect(r.logitLens!.shape).toEqual([layers + 1, 5, 2]);
    expect(r.fullAttention).toBeUndefined();
  });

  it("returns the full attention tensor only when asked, with rows that sum to 1", async () => {
    const trace = await vlm.forward(input, { reductions: ["fullAttention"] });
    const T = trace.tokenIds.length;
    const full = trace.reductions.fullAttention!;
    expect(full.shape).toEqual([vlm.spec.layers, vlm.spec.heads, T, T]);
    for (let row = 0; row < full.data.length / T; row++) {
      const sum = full.data.subarray(row * T, (row + 1) * T).reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - 1)).toBeLessThanOrEqual(1e-5);
    }
  });

  it("an attention bias of zero changes nothing; a positive bias on image tokens raises the image share", async () => {
    const reductions = ["imageAttentionShare"] as const;
    const plain = await vlm.forward(input, { answer: "yes", reductions, logitsAt: [-1] });
    const zero = await vlm.forward(input, {
      answer: "yes",
      reductions,
      logitsAt: [-1],
      attentionBias: { positions: "image", value: 0 },
    });
    const up = await vlm.forward(input, { answer: "yes", reductions, attentionBias: { positions: "image", value: 2 } });
    const diff = plain.logits!.values.reduce((m, v, i) => Math.max(m, Math.abs(v - zero.logits!.values[i]!)), 0);
    expect(diff).toBeLessThanOrEqual(1e-5);
    const mean = (t: typeof plain) => t.reductions.imageAttentionShare!.data.reduce((a, b) => a + b, 0);
    expect(mean(up)).toBeGreaterThan(mean(plain));
    // Only the chosen layer moves when the bias is restricted to it.
    const one = await vlm.forward(input, {
      answer: "yes",
      reductions,
      attentionBias: { positions: "image", value: 2, layers: [0] },
    });
    const H = vlm.spec.heads;
    expect(one.reductions.imageAttentionShare!.data[0]).toBeGreaterThan(plain.reductions.imageAttentionShare!.data[0]!);
    expect(one.reductions.imageAttentionShare!.data.slice(H, 2 * H)).not.toEqual(
      up.reductions.imageAttentionShare!.data.slice(H, 2 * H),
    );
    await expect(vlm.forward(input, { attentionBias: { positions: [9999], value: 1 } })).rejects.toThrow(
      /attentionBias: position 9999 is outside 0…\d+/,
    );
  });
});

describe("bad input gives a clear error", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "evalrx-models-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const copy = (name: string) => {
    const target = join(dir, name);
    cpSync(`${REPO_ROOT}models/tiny-lm`, target, { recursive: true });
    return target;
  };

  it("a truncated ONNX file", async () => {
    const folder = copy("truncated");
    truncateSync(join(folder, "onnx/model.onnx"), 5000);
    await expect(loadModel(folder)).rejects.toThrow(/ONNX model.*(corrupt|truncated)/);
  });

  it("a corrupt ONNX file", async () => {
    const folder = copy("corrupt");
    writeFileSync(join(folder, "onnx/model.onnx"), "<!DOCTYPE html><html><body>not found</body></html>");
    await expect(loadModel(folder)).rejects.toThrow(/ONNX model/);
  });

  it("a folder without config.json", async () => {
    const folder = copy("no-config");
    unlinkSync(join(folder, "config.json"));
    await expect(loadModel(folder)).rejects.toThrow(/has no config\.json: not a model folder/);
  });

  it("an image model whose optional processor_config.json is there but not JSON", async () => {
    const folder = join(dir, "bad-processor");
    cpSync(`${REPO_ROOT}models/tiny-vlm`, folder, { recursive: true });
    writeFileSync(join(folder, "processor_config.json"), "{ not json");
    await expect(loadModel(folder)).rejects.toThrow(/processor_config\.json is not valid JSON/);
  });

  it("a missing tokenizer", async () => {
    const folder = copy("no-tokenizer");
    unlinkSync(join(folder, "tokenizer.json"));
    await expect(loadModel(folder)).rejects.toThrow(/missing tokenizer: model file 'tokenizer\.json' not found/);
  });

  it("an image that is not an image, or over the size limit", async () => {
    await expect(
      vlm.generate({ prompt: input.prompt, image: new TextEncoder().encode("hello, not a picture") }),
    ).rejects.toThrow(/not a PNG/);
    const huge = encodePng({ width: 1, height: 1, data: new Uint8Array(3), channels: 3 });
    new DataView(huge.buffer, huge.byteOffset).setUint32(16, 50_000); // IHDR width
    await expect(vlm.generate({ prompt: input.prompt, image: huge })).rejects.toThrow(/over the 4096-pixel side limit/);
    const jpeg = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, ...new Array(40).fill(0));
    await expect(vlm.generate({ prompt: input.prompt, image: jpeg })).rejects.toThrow(/JPEG/);
  });

  it("an image for a text-only model, or a prompt without the image token", async () => {
    await expect(lm.generate({ prompt: "1 2", image: input.image })).rejects.toThrow(/takes text only/);
    await expect(vlm.generate({ prompt: "is there a red circle ?", image: input.image })).rejects.toThrow(
      /no <image> token/,
    );
  });

  it("a prompt over the context length", async () => {
    const long = Array.from({ length: 200 }, (_, i) => String(i % 10)).join(" ");
    await expect(lm.generate({ prompt: long })).rejects.toThrow(/over tiny-lm's context length of 64/);
  });

  it("fused attention (one MultiHeadAttention) is decomposed: it loads, answers, and reads attention", async () => {
    const fused = await loadModel(`${REPO_ROOT}src/models/fixtures/fused-lm`);
    expect(fused.capabilities.has("attention")).toBe(true);
    expect(fused.attentionStatus).toMatchObject({ source: "decomposed", found: 1, layers: 1 });
    expect(fused.attention).toMatchObject({ kind: "tapped" });
    expect(typeof (await fused.generate({ prompt: "1 2 3" }, { maxNewTokens: 3 }))).toBe("string");
    const trace = await fused.forward({ prompt: "1 2 3" }, { reductions: ["sinkMass"] });
    expect(trace.reductions.sinkMass!.shape).toEqual([1, 2]);
    await fused.dispose();
  });
});
