import type { Capability } from "../../core/capability.ts";
import type { Modality, ModelSpec } from "../../core/model.ts";

type Json = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** The sizes a runtime needs from a model's text stack. */
export interface TextConfig {
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly hiddenSize: number;
  readonly vocabSize: number;
  readonly contextLength: number;
  readonly eosIds: readonly number[];
}

/**
 * Reads the text-stack sizes from a `config.json` (its `text_config` for
 * vision-language models), accepting the common aliases (GPT-2's `n_layer`,
 * …). Throws naming the missing key when a size cannot be found.
 *
 * @example
 * textConfig({ num_hidden_layers: 2, num_attention_heads: 4, hidden_size: 32, vocab_size: 50 }).headDim // → 8
 */
export function textConfig(config: Json): TextConfig {
  const text = (config.text_config as Json | undefined) ?? config;
  const pick = (what: string, ...keys: string[]): number => {
    for (const key of keys) {
      const v = num(text[key]) ?? num(config[key]);
      if (v !== undefined) return v;
    }
    throw new Error(`config.json: cannot find the ${what} (looked for ${keys.join(", ")})`);
  };
  const layers = pick("number of layers", "num_hidden_layers", "n_layer", "num_layers");
  const heads = pick("number of attention heads", "num_attention_heads", "n_head", "num_heads");
  const hiddenSize = pick("hidden size", "hidden_size", "n_embd", "d_model");
  const kvHeads = num(text.num_key_value_heads) ?? heads;
  const headDim = num(text.head_dim) ?? hiddenSize / heads;
  const contextLength =
    num(text.max_position_embeddings) ?? num(text.n_positions) ?? num(config.max_position_embeddings) ?? 2048;
  const eos = text.eos_token_id ?? config.eos_token_id;
  const eosIds = Array.isArray(eos)
    ? eos.filter((e): e is number => typeof e === "number")
    : typeof eos === "number"
      ? [eos]
      : [];
  return {
    layers,
    heads,
    kvHeads,
    headDim,
    hiddenSize,
    vocabSize: pick("vocabulary size", "vocab_size"),
    contextLength,
    eosIds,
  };
}

/**
 * The ONNX files of a folder in transformers.js's layout, by model kind; the
 * decoder is always last.
 *
 * @example
 * onnxFiles({ model_type: "gpt2" }) // → ["onnx/model.onnx"]
 */
export function onnxFiles(config: Json): string[] {
  return isImageModel(config)
    ? ["onnx/vision_encoder.onnx", "onnx/embed_tokens.onnx", "onnx/decoder_model_merged.onnx"]
    : ["onnx/model.onnx"];
}

/**
 * Does this `config.json` describe an image-text model (one with an image
 * token, in the llava multi-session layout)?
 *
 * @example
 * isImageModel({ model_type: "llava", image_token_index: 4 }) // → true
 */
export function isImageModel(config: Json): boolean {
  return num(config.image_token_index) !== undefined || num(config.image_token_id) !== undefined;
}

/**
 * A spec for any folder or hub id, inferred from its `config.json` (and, for
 * image models, `preprocessor_config.json` / `processor_config.json`): family,
 * modalities, sizes, the image token and its grid. Attention capabilities are
 * what an unfused export allows; loading the graph confirms or withdraws them.
 *
 * @example
 * inferSpec("my-folder", "/models/my-folder/", config, pre, proc).image // → { tokenId: 4, grid: [6, 6], size: [48, 48] }
 */
export function inferSpec(key: string, source: string, config: Json, preprocessor?: Json, processor?: Json): ModelSpec {
  if (typeof config.model_type !== "string") throw new Error("config.json: expected a 'model_type' string");
  const text = textConfig(config);
  const modalities = new Set<Modality>(["text"]);
  const capabilities = new Set<Capability>(["generate", "logits", "attention", "attention_write"]);
  let image: ModelSpec["image"];
  if (isImageModel(config)) {
    const tokenId = num(config.image_token_index) ?? num(config.image_token_id)!;
    const vision = (config.vision_config as Json | undefined) ?? {};
    const size = preprocessor?.size as { height?: number; width?: number } | undefined;
    const height = num(size?.height) ?? num(vision.image_size);
    const width = num(size?.width) ?? num(vision.image_size);
    const patch = num(processor?.patch_size) ?? num(vision.patch_size);
    if (!height || !width || !patch)
      throw new Error(
        "image model: cannot find the image size and patch size (preprocessor_config.json size, processor_config.json patch_size)",
      );
    image = { tokenId, grid: [Math.floor(height / patch), Math.floor(width / patch)], size: [height, width] };
    modalities.add("image");
    capabilities.add("image");
  }
  return {
    key,
    family: config.model_type,
    modalities,
    source,
    files: [
      "config.json",
      "tokenizer.json",
      "tokenizer_config.json",
      ...(image ? ["preprocessor_config.json", "processor_config.json"] : []),
      ...onnxFiles(config),
    ],
    layers: text.layers,
    heads: text.heads,
    kvHeads: text.kvHeads,
    hiddenSize: text.hiddenSize,
    vocabSize: text.vocabSize,
    contextLength: text.contextLength,
    ...(image ? { image } : {}),
    capabilities,
  };
}
