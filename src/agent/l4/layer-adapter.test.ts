import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FailureCase } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { nodeSessions } from "../../models/ort-session.node.ts";
import { readFolder, writeFolder } from "./executor.node.ts";
import { headAdapterCandidate } from "./executor.ts";
import { SealedCaseRefused } from "./head-features.ts";
import { lastLayerLoss } from "./last-layer.ts";
import { mergeLayerFiles } from "./layer-merge.ts";
import { layerPool } from "./layer-pool.ts";
import { trainLayerLora } from "./layer-train.ts";
import { readLastLayer } from "./layer-weights.ts";

const FOLDER = join(REPO_ROOT, "models/planted-vlm");
const images = async (ref: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));

async function demoCases(n: number): Promise<FailureCase[]> {
  const bytes = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl")));
  return (await importDataset(bytes, { name: "pope.jsonl" })).cases.slice(0, n);
}

/** log softmax(z)[y] of one row. */
function logprob(z: Float32Array, y: number): number {
  const max = Math.max(...z);
  return z[y]! - max - Math.log(z.reduce((s, v) => s + Math.exp(v - max), 0));
}

describe("the L4 layer adapter on planted-vlm (onnxruntime-node)", () => {
  it("reads the last layer, whose forward equals onnxruntime's to 1e-4; trains; the merged folder gives the trained log-probabilities", async () => {
    const files = readFolder(FOLDER);
    const last = readLastLayer(files);
    expect(last).toMatchObject({ decoder: "onnx/decoder_model_merged.onnx", layer: 1, layers: 2 });
    expect(last.weights).toMatchObject({ dim: 64, heads: 4, headDim: 16, inner: 192, vocab: 29, eps: 1e-5 });
    const cases = await demoCases(24);
    const model = await loadModel(FOLDER);
    let pool;
    try {
      pool = await layerPool(model, cases, last, { images, sealed: new Set() });
    } finally {
      await model.dispose();
    }
    expect(pool.rows).toBe(24);
    expect(pool.maxError).toBeLessThan(1e-4);
    // Toward the opposite answers, so a few steps have something to learn.
    const yes = pool.cases[cases.findIndex((c) => c.expected === "yes")]!.targets[0]!;
    const no = pool.cases[cases.findIndex((c) => c.expected === "no")]!.targets[0]!;
    const flipped = pool.cases.map((c) => ({ ...c, targets: c.targets.map((t) => (t === yes ? no : yes)) }));
    const fit = await trainLayerLora(last.weights, flipped, { steps: 60, seed: 2, learningRate: 0.02 });
    expect(fit.finalLoss).toBeLessThan(fit.initialLoss - 1);
    const { files: merged, changed } = mergeLayerFiles(files, last, fit.adapters);
    // Each of q, k, v, o in the tapped decoder and its untapped twin.
    expect(changed.filter((c) => c.startsWith("onnx/decoder_model_merged.onnx:"))).toHaveLength(4);
    expect(changed.filter((c) => c.startsWith("onnx/decoder_untapped.onnx:"))).toHaveLength(4);
    const dir = join(mkdtempSync(join(tmpdir(), "evalrx-l4-layer-")), "planted-vlm+lora");
    writeFolder(dir, merged);
    const tuned = await loadModel(dir);
    try {
      const trained = lastLayerLoss(last.weights, flipped, fit.adapters, false).logits;
      for (const i of [0, 7, 19]) {
        const c = cases[i]!;
        const t = await tuned.forward(
          { prompt: c.input.prompt, image: await images(c.input.image!) },
          { answer: c.expected === "yes" ? "no" : "yes", reductions: ["tokenLogprob"] },
        );
        const p = t.answerPositions[0]!;
        const mine = logprob(trained.subarray(i * 29, (i + 1) * 29), flipped[i]!.targets[0]!);
        expect(Math.abs(t.reductions.tokenLogprob!.data[p]! - mine)).toBeLessThan(1e-4);
      }
      // Generation runs the untapped decoder: it answers what training aimed at.
      const c = cases[0]!;
      const answer = await tuned.generate({ prompt: c.input.prompt, image: await images(c.input.image!) });
      expect(answer.startsWith(c.expected === "yes" ? "no" : "yes")).toBe(true);
    } finally {
      await tuned.dispose();
    }
  }, 120_000);

  it("refuses a pool whose layer disagrees with the runtime, and a sealed case before reading anything", async () => {
    const files = readFolder(FOLDER);
    const last = readLastLayer(files);
    const cases = await demoCases(3);
    const model = await loadModel(FOLDER);
    try {
      // The post-attention norm's weights scaled: what last-layer.ts computes is no longer what the file does.
      const wrong = { ...last, weights: { ...last.weights, postNorm: last.weights.postNorm.map((v) => v * 1.01) } };
      await expect(layerPool(model, cases, wrong, { images, sealed: new Set() })).rejects.toThrow(
        /gives log-probabilities .* away from .*planted-vlm's runtime \(tolerance 0\.0001\)/,
      );
      const reads: string[] = [];
      const sealed = new Set([cases[1]!.id]);
      const o = { images: async (ref: string) => (reads.push(ref), images(ref)), sealed };
      await expect(layerPool(model, cases, last, o)).rejects.toThrow(SealedCaseRefused);
      expect(reads).toEqual([]);
    } finally {
      await model.dispose();
    }
  });

  it("names a training failure: a folder without the decoder layout", async () => {
    const model = await loadModel(FOLDER);
    try {
      const l4 = headAdapterCandidate({
        cases: await demoCases(2),
        sealed: new Set(),
        images,
        sessions: nodeSessions,
        files: async () => new Map([["config.json", new TextEncoder().encode("{}")]]),
        materialize: async () => {
          throw new Error("not reached");
        },
      });
      expect(l4.signature).toBe("lora:last-layer.qkvo:r4:a8:steps300:seed1");
      await expect(l4.generate(model, { prompt: "<image> is there a red circle ?" }, {})).rejects.toThrow(
        "L4 training failed: L4 layer adapter: no decoder file with 'logits' and 'hidden_states.*' outputs among (no .onnx files)",
      );
      expect(l4.failure()).toMatch(/no decoder file/);
    } finally {
      await model.dispose();
    }
  });
});
