import type { Capability } from "../../core/capability.ts";
import type { Modality, ModelSpec } from "../../core/model.ts";
import { isImageTextConfig, modelKind, roleNames } from "../layout.ts";

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
  /**
   * Longest sequence the model takes. `Number.MAX_SAFE_INTEGER` when the config
   * declares none (T5's relative positions have no cap): `contextFrom` says so.
   */
  readonly contextLength: number;
  /** Where `contextLength` came from: the config key, "relative positions", or "not declared …". */
  readonly contextFrom: string;
  readonly eosIds: readonly number[];
  /** For encoder-decoder models: the encoder's layers and heads (the fields above are the decoder's). */
  readonly encoder?: { readonly layers: number; readonly heads: number };
}

/**
 * Reads the text-stack sizes from a `config.json` (its `text_config` for
 * vision-language models), accepting the names each family uses: GPT-2's
 * `n_layer`/`n_head`/`n_embd`, T5's `num_layers`/`num_heads`/`d_model`/`d_kv`,
 * BART's and Whisper's `decoder_layers`/`decoder_attention_heads` (the
 * decoder's sizes; the encoder's go to `encoder`). Throws naming the keys it
 * looked for when a size cannot be found.
 *
 * @example
 * textConfig({ num_hidden_layers: 2, num_attention_heads: 4, hidden_size: 32, vocab_size: 50, max_position_embeddings: 64 }).headDim // → 8
 */
export function textConfig(config: Json): TextConfig {
  const text = (config.text_config as Json | undefined) ?? config;
  const lookup = (...keys: string[]): [number, string] | undefined => {
    for (const key of keys) {
      const v = num(text[key]) ?? num(config[key]);
      if (v !== undefined) return [v, key];
    }
    return undefined;
  };
  const pick = (what: string, ...keys: string[]): number => {
    const hit = lookup(...keys);
    if (hit) return hit[0];
    throw new Error(`config.json: cannot find the ${what} (looked for ${keys.join(", ")})`);
  };
  const kind = modelKind(config);
  const seq2seq = kind === "encoder-decoder";
  // An encoder-decoder's text stack is its decoder: it generates, and its attention is read per step.
  const layers = seq2seq
    ? pick("number of decoder layers", "decoder_layers", "num_decoder_layers", "num_layers", "num_hidden_layers")
    : pick("number of layers", "num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers");
  const heads = seq2seq
    ? pick("number of decoder attention heads", "decoder_attention_heads", "num_heads", "num_attention_heads")
    : pick(
        "number of attention heads",
        "num_attention_heads",
        "n_head",
        "num_heads",
        "n_heads",
        "encoder_attention_heads",
      );
  const hiddenSize = pick("hidden size", "hidden_size", "n_embd", "d_model", "dim");
  const kvHeads =
    num(text.num_key_value_heads) ??
    num(text.n_head_kv) ??
    num(text.num_kv_heads) ??
    (text.multi_query === true ? 1 : undefined) ??
    heads;
  const headDim = num(text.head_dim) ?? num(text.d_kv) ?? hiddenSize / heads;
  const contextKeys = [
    "max_position_embeddings",
    "n_positions",
    "max_target_positions",
    "n_ctx",
    "max_sequence_length",
    "max_seq_length",
    "seq_length",
    "max_seq_len",
    "context_length",
    "block_size",
  ];
  const context = lookup(...contextKeys);
  let contextLength: number;
  let contextFrom: string;
  if (context) [contextLength, contextFrom] = context;
  else {
    // No silent default: the spec says there is no limit, and where it looked.
    contextLength = Number.MAX_SAFE_INTEGER;
    contextFrom =
      num(text.relative_attention_num_buckets) !== undefined
        ? "relative positions (no limit declared)"
        : `not declared in config.json (looked for ${contextKeys.join(", ")})`;
  }
  const eos = text.eos_token_id ?? config.eos_token_id;
  const eosIds = Array.isArray(eos)
    ? eos.filter((e): e is number => typeof e === "number")
    : typeof eos === "number"
      ? [eos]
      : [];
  const encoderLayers = lookup("encoder_layers", "num_layers", "num_hidden_layers");
  const encoderHeads = lookup("encoder_attention_heads", "num_heads", "num_attention_heads");
  return {
    layers,
    heads,
    kvHeads,
    headDim,
    hiddenSize,
    vocabSize: pick("vocabulary size", "vocab_size", "padded_vocab_size"),
    contextLength,
    contextFrom,
    eosIds,
    ...(seq2seq && encoderLayers && encoderHeads
      ? { encoder: { layers: encoderLayers[0], heads: encoderHeads[0] } }
      : {}),
  };
}

/**
 * The default (fp32) ONNX files of a folder in transformers.js's layout, by
 * model kind; the decoder (or the encoder of an encoder-only model) is last.
 * `resolveLayout` finds the files a folder really holds, in any dtype variant.
 *
 * @example
 * onnxFiles({ model_type: "gpt2" }) // → ["onnx/model.onnx"]
 */
export function onnxFiles(config: Json): string[] {
  return roleNames(config).map((r) => `onnx/${r.names[0]}.onnx`);
}

/**
 * Does this `config.json` describe an image-text model whose image token the
 * runtime expands into a grid of image features (the llava layout)?
 *
 * @example
 * isImageModel({ model_type: "llava", image_token_index: 4 }) // → true
 */
export function isImageModel(config: Json): boolean {
  return num(config.image_token_index) !== undefined || num(config.image_token_id) !== undefined;
}

/** Families whose images the ort runtime prepares itself (one image token expanded into a fixed grid). */
export const GRID_IMAGE_FAMILIES: ReadonlySet<string> = new Set(["llava"]);

/**
 * A spec for any folder or hub id, inferred from its `config.json` (and, for
 * image models, `preprocessor_config.json` / `processor_config.json`): family,
 * modalities, sizes, the image token and its grid. Its capabilities are what
 * the config alone shows — `generate` for models that generate (not
 * encoder-only ones), `logits`, `image` — and never attention: whether
 * attention can be read is decided from the ONNX graph (`inspectModel`),
 * which adds `attention` / `attention_write` when it can.
 *
 * @example
 * inferSpec("my-folder", "/models/my-folder/", config, pre, proc).image // → { tokenId: 4, grid: [6, 6], size: [48, 48] }
 */
export function inferSpec(key: string, source: string, config: Json, preprocessor?: Json, processor?: Json): ModelSpec {
  if (typeof config.model_type !== "string") throw new Error("config.json: expected a 'model_type' string");
  const text = textConfig(config);
  const kind = modelKind(config);
  const modalities = new Set<Modality>(["text"]);
  const capabilities = new Set<Capability>(kind === "encoder" ? [] : ["generate", "logits"]);
  let image: ModelSpec["image"];
  if (isImageTextConfig(config)) modalities.add("image");
  if (isImageModel(config) && GRID_IMAGE_FAMILIES.has(config.model_type)) {
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
