import type { Capability } from "../../core/capability.ts";
import type { ModelSpec } from "../../core/model.ts";

const WHITE_BOX: readonly Capability[] = ["generate", "logits", "attention", "hidden_states", "attention_write"];

/**
 * The models shipped in `models/` (made by `models/forge`). Their numbers
 * mirror each folder's `config.json`; a test checks they agree with the spec
 * inferred from it.
 */
export const BUNDLED_SPECS: readonly ModelSpec[] = [
  {
    key: "tiny-vlm",
    family: "llava",
    modalities: new Set(["text", "image"]),
    source: "models/tiny-vlm",
    files: [
      "config.json",
      "tokenizer.json",
      "tokenizer_config.json",
      "preprocessor_config.json",
      "processor_config.json",
      "onnx/vision_encoder.onnx",
      "onnx/embed_tokens.onnx",
      "onnx/decoder_model_merged.onnx",
    ],
    layers: 3,
    heads: 4,
    kvHeads: 4,
    hiddenSize: 96,
    vocabSize: 37,
    contextLength: 128,
    image: { tokenId: 4, grid: [6, 6], size: [48, 48] },
    capabilities: new Set<Capability>([...WHITE_BOX, "image"]),
  },
  {
    key: "tiny-lm",
    family: "llama",
    modalities: new Set(["text"]),
    source: "models/tiny-lm",
    files: ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"],
    layers: 2,
    heads: 4,
    kvHeads: 4,
    hiddenSize: 64,
    vocabSize: 16,
    contextLength: 64,
    capabilities: new Set<Capability>(WHITE_BOX),
  },
];
