import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadModel, REPO_ROOT } from "../load.node.ts";
import { discoverAttention, readOnnxGraph } from "../onnx-graph.ts";
import { getSpec, inferSpec, listSpecs, textConfig } from "./index.ts";

describe("the specs registry", () => {
  it("lists the two bundled models and finds them by key", () => {
    expect(listSpecs().map((s) => s.key)).toEqual(["tiny-vlm", "tiny-lm"]);
    expect(getSpec("tiny-vlm")?.modalities.has("image")).toBe(true);
    expect(getSpec("no-such-model")).toBeUndefined();
  });

  it("each bundled spec agrees with its ONNX graphs: layers, heads, hidden size, vocabulary, image grid", async () => {
    for (const spec of listSpecs()) {
      const model = await loadModel(spec.key);
      try {
        const graph = readOnnxGraph(new Uint8Array(readFileSync(`${REPO_ROOT}${spec.source}/${spec.files.at(-1)!}`)));
        expect(discoverAttention(graph).softmaxes.length, spec.key).toBe(spec.layers);
        expect(graph.outputs.filter((o) => o.startsWith("attentions.")).length).toBe(spec.layers);
        const input = spec.image
          ? {
              prompt: "<image> is there a red circle ?",
              image: new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/images/scene-0001.png`)),
            }
          : { prompt: "1 2 3" };
        const trace = await model.forward(input, { reductions: ["fullAttention"], logitsAt: [-1] });
        const T = trace.tokenIds.length;
        expect(trace.reductions.fullAttention!.shape).toEqual([spec.layers, spec.heads, T, T]);
        expect(trace.logits!.vocab).toBe(spec.vocabSize);
        if (spec.image) expect(trace.imagePositions.length).toBe(spec.image.grid[0] * spec.image.grid[1]);
        for (const file of spec.files) expect(() => readFileSync(`${REPO_ROOT}${spec.source}/${file}`)).not.toThrow();
        expect([...spec.capabilities].sort()).toEqual([...model.capabilities].sort());
      } finally {
        await model.dispose();
      }
    }
  });

  it("infers sizes from common config aliases and says which key is missing", () => {
    const gpt2 = { model_type: "gpt2", n_layer: 12, n_head: 12, n_embd: 768, vocab_size: 50257, n_positions: 1024 };
    expect(textConfig(gpt2)).toMatchObject({ layers: 12, heads: 12, kvHeads: 12, headDim: 64, contextLength: 1024 });
    const spec = inferSpec("gpt2", "openai-community/gpt2", gpt2);
    expect(spec.files).toContain("onnx/model.onnx");
    expect(spec.image).toBeUndefined();
    expect(() => textConfig({ model_type: "x", n_head: 2 })).toThrow(/number of layers \(looked for num_hidden_layers/);
    expect(() => inferSpec("x", "x", {})).toThrow(/model_type/);
  });
});
