import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModel, REPO_ROOT } from "../src/models/load.node.ts";
import type { OrtModel } from "../src/models/ort-model.ts";
import { explain, imageMaps, keptMatrix, matrixOf } from "./explain.ts";

let model: OrtModel;
const image = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/images/scene-0001.png")));
const prompt = "<image> is there a red circle ?";

beforeAll(async () => {
  model = await loadModel("tiny-vlm");
});
afterAll(async () => model?.dispose());

describe("explain (tiny-vlm on onnxruntime-node)", () => {
  it("answers, and reads what the playground draws from one teacher-forced forward", async () => {
    const ex = await explain(model, { prompt, image, maxNewTokens: 4 });
    expect(ex.answer).toBe(await model.generate({ prompt, image }, { maxNewTokens: 4 }));
    expect(ex.missing).toEqual([]);
    const [rows, cols] = ex.grid!;
    const cells = rows * cols;
    expect(ex.answerMaps).toHaveLength(ex.layers * ex.heads * cells);
    expect(ex.rollout).toHaveLength(cells);
    // The last prompt token's map, averaged over heads, is the runtime's own imageAttentionMap reduction.
    const trace = await model.forward({ prompt, image }, { answer: ex.answer, reductions: ["imageAttentionMap"] });
    const reference = trace.reductions.imageAttentionMap!.data;
    for (let l = 0; l < ex.layers; l++)
      for (let i = 0; i < cells; i++) {
        let mean = 0;
        for (let h = 0; h < ex.heads; h++) mean += ex.lastMaps![(l * ex.heads + h) * cells + i]! / ex.heads;
        expect(mean).toBeCloseTo(reference[l * cells + i]!, 5);
      }
    // Each answer token is the top-1 of its distribution under greedy decoding, with its entropy and margin.
    expect(ex.answerTokens.length).toBeGreaterThan(0);
    for (const t of ex.answerTokens) {
      expect(t.top[0]!.prob).toBeCloseTo(t.prob, 6);
      expect(t.margin).toBeGreaterThanOrEqual(0);
      expect(t.entropy).toBeGreaterThanOrEqual(0);
      expect(t.top).toHaveLength(5);
    }
    // The logit lens: one state per hidden state, the last one's top-1 is the answer's first token.
    expect(ex.lens!.length).toBeGreaterThan(1);
    expect(ex.lens!.at(-1)!.top[0]!.isAnswer).toBe(true);
    // The full attention stays in the worker; one layer × head comes out as a T × T matrix whose rows sum to 1.
    const m = keptMatrix(ex.id, ex.layers - 1, 0);
    expect(m.size).toBe(ex.tokens.length);
    const row = m.data.slice((m.size - 1) * m.size, m.size * m.size).reduce((a, b) => a + b, 0);
    expect(row).toBeCloseTo(1, 4);
  });

  it("asks again under an intervention: reweighting, sink suppression and the attention-guided crop", async () => {
    const plain = await explain(model, { prompt, image });
    const reweighted = await explain(model, { prompt, image, intervention: { kind: "reweight", value: 2 } });
    expect(reweighted.intervention).toMatch(/^attention \+2 on every image token/);
    // More attention on the image tokens: their share of the last prompt token's attention grows.
    const share = (maps: Float32Array) => maps.reduce((a, b) => a + b, 0);
    expect(share(reweighted.lastMaps!)).toBeGreaterThan(share(plain.lastMaps!));
    const sink = await explain(model, { prompt, image, intervention: { kind: "sink", value: 3 } });
    expect(sink.intervention).toMatch(/^sink suppression/);
    const crop = await explain(model, { prompt, image, intervention: { kind: "crop", fraction: 0.5 } });
    expect(crop.image!.width).toBe(plain.image!.width);
    expect(Buffer.from(crop.image!.data).equals(Buffer.from(plain.image!.data))).toBe(false);
    await expect(explain(model, { prompt, intervention: { kind: "crop", fraction: 0.5 } })).rejects.toThrow(
      "crop: this question has no image to crop",
    );
    await expect(explain(model, { prompt, image, intervention: { kind: "crop", fraction: 1.5 } })).rejects.toThrow(
      "crop: the window must be a share of the image in (0, 1), got 1.5",
    );
    await expect(explain(model, { prompt: " " })).rejects.toThrow("the question is empty");
  });
});

it("averages query rows over the image tokens per layer × head, and copies one matrix out", () => {
  // 1 layer, 2 heads, T = 3; the image tokens are keys 1 and 2.
  const full = {
    shape: [1, 2, 3, 3],
    axes: ["layer", "head", "query", "key"],
    data: Float32Array.from([1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5, 1, 0, 0, 0.1, 0.9, 0, 0, 0, 1]),
  };
  expect(Array.from(imageMaps(full, [1, 2], [1, 2]))).toEqual([
    expect.closeTo(0.4, 6),
    expect.closeTo(0.25, 6),
    expect.closeTo(0.45, 6),
    expect.closeTo(0.5, 6),
  ]);
  expect(Array.from(matrixOf(full, 0, 1))).toEqual(Array.from(full.data.slice(9)));
  expect(() => matrixOf(full, 1, 0)).toThrow("attention matrix: layer 1 is not one of 0…0");
  expect(() => imageMaps(full, [3], [1])).toThrow("imageMaps(): position 3 is outside a 3-token sequence");
});
