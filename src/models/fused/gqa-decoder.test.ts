import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { afterAll, describe, expect, it } from "vitest";
import { maxAbsDiff } from "../fixtures/max-abs-diff.ts";
import { gqaDecoder, gqaDecoderConfig, type GqaDecoderOptions } from "../fixtures/gqa-decoder.ts";
import { loadModel, REPO_ROOT } from "../load.node.ts";
import { prepareAttention } from "../prepare-attention.ts";

const SIZES: GqaDecoderOptions = { layers: 2, hidden: 64, heads: 4, kvHeads: 2, vocab: 16, maxPositions: 64 };
const HEAD = SIZES.hidden / SIZES.heads;

/** The largest difference between two tensors of the same shape. */
function tensorDiff(a: ort.Tensor, b: ort.Tensor): number {
  expect(b.dims).toEqual(a.dims);
  return maxAbsDiff(a.data as Float32Array, b.data as Float32Array);
}

/** Greedy decoding on a raw session: the prompt, then `steps` cached steps; every output of every step. */
async function decode(session: ort.InferenceSession, prompt: number[], steps: number) {
  const outs: ort.InferenceSession.OnnxValueMapType[] = [];
  let ids = prompt;
  let total = prompt.length;
  let past: Record<string, ort.Tensor> = {};
  for (let l = 0; l < SIZES.layers; l++)
    for (const kv of ["key", "value"])
      past[`past_key_values.${l}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [1, SIZES.kvHeads, 0, HEAD]);
  for (let s = 0; s <= steps; s++) {
    const out = await session.run({
      input_ids: new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
      attention_mask: new ort.Tensor("int64", new BigInt64Array(total).fill(1n), [1, total]),
      ...past,
    });
    outs.push(out);
    const logits = out.logits!.data as Float32Array;
    const last = logits.subarray((ids.length - 1) * SIZES.vocab, ids.length * SIZES.vocab);
    ids = [last.indexOf(Math.max(...last))];
    total += 1;
    past = {};
    for (let l = 0; l < SIZES.layers; l++)
      for (const kv of ["key", "value"]) past[`past_key_values.${l}.${kv}`] = out[`present.${l}.${kv}`]!;
  }
  return outs;
}

describe("a GroupQueryAttention decoder (onnxruntime-genai style), decomposed", () => {
  for (const packed of [false, true])
    it(`${packed ? "packed QKV" : "separate Q/K/V"}: the prompt and 4 cached greedy steps equal the fused kernel's, every output`, async () => {
      const fused = gqaDecoder({ ...SIZES, packed });
      const prepared = prepareAttention(fused, { heads: SIZES.heads, layers: SIZES.layers });
      expect(prepared.status).toMatchObject({ source: "decomposed", found: 2, readable: true, writable: true });
      expect(prepared.status.fused.map((f) => f.decomposed)).toEqual([true, true]);
      const [a, b] = await Promise.all([
        ort.InferenceSession.create(fused),
        ort.InferenceSession.create(prepared.bytes),
      ]);
      const [ra, rb] = await Promise.all([decode(a, [1, 4, 9, 7, 5], 4), decode(b, [1, 4, 9, 7, 5], 4)]);
      ra.forEach((out, step) => {
        for (const name of a.outputNames)
          expect(tensorDiff(out[name]!, rb[step]![name]!), `${name} @${step}`).toBeLessThanOrEqual(1e-4);
        expect(rb[step]!["attentions.0"]!.dims).toEqual([1, SIZES.heads, step === 0 ? 5 : 1, 5 + step]);
      });
      await Promise.all([a.release(), b.release()]);
    });
});

it("gqa-reference.json (the browser test's oracle) is what onnxruntime-node's fused kernel gives now", async () => {
  const reference = JSON.parse(readFileSync(`${REPO_ROOT}src/models/fixtures/gqa-reference.json`, "utf8")) as {
    sizes: GqaDecoderOptions;
    ids: number[];
    logits: number[];
    "present.1.value": number[];
  };
  expect(reference.sizes).toEqual(SIZES);
  const session = await ort.InferenceSession.create(gqaDecoder(reference.sizes));
  const [out] = await decode(session, reference.ids, 0);
  expect(maxAbsDiff(out!.logits!.data as Float32Array, reference.logits)).toBeLessThanOrEqual(1e-5);
  expect(maxAbsDiff(out!["present.1.value"]!.data as Float32Array, reference["present.1.value"])).toBeLessThanOrEqual(
    1e-5,
  );
  await session.release();
});

describe("a folder whose decoder is fused loads, generates and reads attention", () => {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-gqa-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const folder = (name: string, options: GqaDecoderOptions) => {
    const path = join(dir, name);
    mkdirSync(join(path, "onnx"), { recursive: true });
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      cpSync(`${REPO_ROOT}models/tiny-lm/${f}`, join(path, f));
    writeFileSync(join(path, "config.json"), JSON.stringify(gqaDecoderConfig(options)));
    writeFileSync(join(path, "onnx/model.onnx"), gqaDecoder(options));
    return path;
  };

  it("greedy generation equals the fused graph's; a forward returns [layers, heads, T, T] attention", async () => {
    const model = await loadModel(folder("gqa", SIZES));
    try {
      expect(model.attentionStatus).toMatchObject({ source: "decomposed", found: 2, layers: 2 });
      expect([...model.capabilities].sort()).toEqual(["attention", "attention_write", "generate", "logits"]);
      const prompt = "reverse 3 1 5 =";
      const ours = await model.generateTokens({ prompt }, { maxNewTokens: 6 });
      const fused = await ort.InferenceSession.create(gqaDecoder(SIZES));
      const ids = model.codec.encode(prompt, true);
      const steps = await decode(fused, ids, ours.ids.length);
      const greedy = steps.map((out, i) => {
        const logits = out.logits!.data as Float32Array;
        const n = i === 0 ? ids.length : 1;
        const last = logits.subarray((n - 1) * SIZES.vocab, n * SIZES.vocab);
        return last.indexOf(Math.max(...last));
      });
      expect(greedy.slice(0, ours.ids.length)).toEqual(ours.ids);
      await fused.release();
      const trace = await model.forward({ prompt }, { reductions: ["fullAttention", "attentionEntropy"] });
      const T = trace.tokenIds.length;
      expect(trace.reductions.fullAttention!.shape).toEqual([2, 4, T, T]);
      expect(trace.reductions.attentionEntropy!.shape).toEqual([2, 4]);
    } finally {
      await model.dispose();
    }
  });

  it("an op it cannot decompose: the model still generates, and attention is refused with the reason", async () => {
    const model = await loadModel(folder("gqa-smooth", { ...SIZES, attributes: { smooth_softmax: 1 } }));
    try {
      expect(model.capabilities.has("attention")).toBe(false);
      expect(model.attention).toMatchObject({ kind: "unreadable" });
      expect(model.attentionStatus.reason).toMatch(
        /GroupQueryAttention '.*' \(main graph\) was not decomposed: not decomposed: smooth_softmax/,
      );
      expect(typeof (await model.generate({ prompt: "1 2 3" }, { maxNewTokens: 2 }))).toBe("string");
      await expect(model.forward({ prompt: "1 2" }, { reductions: ["sinkMass"] })).rejects.toThrow(
        /smooth_softmax.*cannot provide 'attention'/s,
      );
    } finally {
      await model.dispose();
    }
  });
});
