import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutoModelForCausalLM, AutoTokenizer, Tensor, env } from "@huggingface/transformers";
import * as ort from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CapabilityError } from "../core/capability.ts";
import { loadModel, REPO_ROOT } from "./load.node.ts";
import { attentionTapCache } from "./transformers-tap.ts";
import { wrap, wrapSession, type TransformersModelLike, type TransformersTokenizerLike } from "./wrap.ts";

const LM = `${REPO_ROOT}models/tiny-lm/`;
const config = JSON.parse(readFileSync(`${LM}config.json`, "utf8")) as Record<string, unknown>;
const toOrt = (t: { type: string; data: unknown; dims: readonly number[] }) =>
  new ort.Tensor(t.type as "float32", t.data as Float32Array, t.dims);

describe("wrap: bring your own model, capabilities read from it", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "evalrx-wrap-"));
    cpSync(LM, join(dir, "plain-lm"), { recursive: true });
    cpSync(join(dir, "plain-lm/onnx/model_untapped.onnx"), join(dir, "plain-lm/onnx/model.onnx"));
  });
  afterAll(() => {
    env.useCustomCache = false;
    env.customCache = null;
    rmSync(dir, { recursive: true, force: true });
  });

  it("an ONNX Runtime session without attention outputs: generates as loadModel does, refuses attention with the reason", async () => {
    const session = await ort.InferenceSession.create(readFileSync(`${LM}onnx/model_untapped.onnx`));
    const ours = await loadModel("tiny-lm");
    const tokenizer = ours.codec;
    const model = await wrapSession(session, tokenizer, config, { toOrt, key: "my-lm" });
    try {
      expect([...model.capabilities].sort()).toEqual(["generate", "logits"]);
      expect(model.attentionStatus.reason).toMatch(/a session cannot be edited/);
      for (const prompt of ["reverse 3 1 4 =", "reverse 9 2 ="]) {
        const a = await model.generateTokens({ prompt }, { maxNewTokens: 8 });
        expect(a.ids).toEqual((await ours.generateTokens({ prompt }, { maxNewTokens: 8 })).ids);
      }
      await expect(model.forward({ prompt: "1 2" }, { reductions: ["sinkMass"] })).rejects.toThrow(CapabilityError);
      await expect(wrapSession(session, tokenizer, config, { toOrt, want: ["attention"] })).rejects.toThrow(
        /a session cannot be edited.*cannot provide 'attention'/,
      );
    } finally {
      await Promise.all([model.dispose(), ours.dispose()]);
    }
  });

  it("with the graph's bytes too, the attention-bias edit is available", async () => {
    const bytes = new Uint8Array(readFileSync(`${LM}onnx/model.onnx`));
    const session = await ort.InferenceSession.create(bytes);
    const ours = await loadModel("tiny-lm");
    const model = await wrapSession(session, ours.codec, config, {
      toOrt,
      graph: { bytes, create: (b) => ort.InferenceSession.create(b) },
      want: ["attention", "attention_write"],
    });
    try {
      const input = { prompt: "reverse 3 1 4 =" };
      const plain = await model.forward(input, { reductions: ["sinkMass"] });
      const pushed = await model.forward(input, {
        reductions: ["sinkMass"],
        attentionBias: { positions: [0], value: 3 },
      });
      const mean = (t: typeof plain) => t.reductions.sinkMass!.data.reduce((a, b) => a + b, 0);
      expect(mean(pushed)).toBeGreaterThan(mean(plain));
      const reference = await ours.forward(input, { reductions: ["sinkMass"] });
      expect(Array.from(plain.reductions.sinkMass!.data)).toEqual(Array.from(reference.reductions.sinkMass!.data));
    } finally {
      await Promise.all([model.dispose(), ours.dispose()]);
    }
  });

  it("a transformers.js model loaded through the tap cache returns attention on its own sessions", async () => {
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = `${dir}/`;
    env.useCustomCache = true;
    env.customCache = attentionTapCache(async (key) => {
      try {
        return new Uint8Array(readFileSync(key));
      } catch {
        return undefined;
      }
    });
    const tokenizer = await AutoTokenizer.from_pretrained("plain-lm");
    const loaded = await AutoModelForCausalLM.from_pretrained("plain-lm", { dtype: "fp32" });
    const model = await wrap(
      loaded as unknown as TransformersModelLike,
      tokenizer as unknown as TransformersTokenizerLike,
      {
        toOrt: (t) => new Tensor(t.type as "float32", t.data as Float32Array, [...t.dims]).ort_tensor as ort.Tensor,
        want: ["attention"],
      },
    );
    const ours = await loadModel("tiny-lm");
    try {
      expect([...model.capabilities].sort()).toEqual(["attention", "generate", "logits"]);
      const input = { prompt: "reverse 5 2 7 =" };
      const a = await model.forward(input, { reductions: ["fullAttention"] });
      const b = await ours.forward(input, { reductions: ["fullAttention"] });
      const diff = a.reductions.fullAttention!.data.reduce(
        (m, v, i) => Math.max(m, Math.abs(v - b.reductions.fullAttention!.data[i]!)),
        0,
      );
      expect(diff).toBeLessThanOrEqual(1e-5);
      expect((await model.generateTokens(input, { maxNewTokens: 6 })).ids).toEqual(
        (await ours.generateTokens(input, { maxNewTokens: 6 })).ids,
      );
    } finally {
      await Promise.all([loaded.dispose(), ours.dispose()]);
    }
  });
});
