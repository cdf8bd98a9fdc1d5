import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../load.node.ts";
import { getSpec, inferSpec, listSpecs, textConfig } from "./index.ts";

const json = (path: string) => JSON.parse(readFileSync(`${REPO_ROOT}${path}`, "utf8")) as Record<string, unknown>;

describe("the specs registry", () => {
  it("lists the two bundled models and finds them by key", () => {
    expect(listSpecs().map((s) => s.key)).toEqual(["tiny-vlm", "tiny-lm"]);
    expect(getSpec("tiny-vlm")?.modalities.has("image")).toBe(true);
    expect(getSpec("no-such-model")).toBeUndefined();
  });

  it("each bundled spec agrees with the spec inferred from its folder's config files", () => {
    for (const spec of listSpecs()) {
      const folder = spec.source;
      const image = spec.modalities.has("image");
      const inferred = inferSpec(
        spec.key,
        spec.source,
        json(`${folder}/config.json`),
        image ? json(`${folder}/preprocessor_config.json`) : undefined,
        image ? json(`${folder}/processor_config.json`) : undefined,
      );
      const { capabilities: declared, ...rest } = spec;
      const { capabilities: guessed, ...inferredRest } = inferred;
      expect(rest).toEqual(inferredRest);
      // Inference cannot know the export carries hidden states; the registry does.
      expect([...declared].sort()).toEqual([...guessed, "hidden_states"].sort());
      for (const file of spec.files) expect(() => readFileSync(`${REPO_ROOT}${folder}/${file}`)).not.toThrow();
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
