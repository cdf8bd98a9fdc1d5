/**
 * Which ONNX files make a model, in the layouts transformers.js models are
 * published in: `onnx/model.onnx` (decoder-only or encoder-only),
 * `onnx/decoder_model_merged.onnx` (decoder with `use_cache_branch`),
 * `encoder_model` + `decoder_model_merged` (encoder-decoder), and the VLM
 * split `vision_encoder` + `embed_tokens` + decoder (+ `encoder_model` for
 * encoder-decoder VLMs such as Florence-2), each in the dtype variants
 * transformers.js chooses among (`_fp16`, `_quantized`, `_q4`, …).
 */
import { MissingFileError, type FileSource } from "./session.ts";

/** What a model is, as far as running it goes. */
export type ModelKind = "decoder" | "encoder" | "encoder-decoder" | "image-text";

/** A file's part in the model. */
export type FileRole = "decoder" | "encoder" | "vision_encoder" | "embed_tokens";

/** transformers.js's dtype names and the file-name suffixes they select. */
export const DTYPE_SUFFIXES: Readonly<Record<string, string>> = {
  fp32: "",
  fp16: "_fp16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  q4: "_q4",
  q4f16: "_q4f16",
  bnb4: "_bnb4",
  q2: "_q2",
  q2f16: "_q2f16",
  q1: "_q1",
  q1f16: "_q1f16",
};

type Json = Record<string, unknown>;

/** Families that are encoder-only (no generation), as `config.json` names them. */
const ENCODER_ONLY = new Set([
  "bert",
  "roberta",
  "distilbert",
  "albert",
  "electra",
  "deberta",
  "deberta-v2",
  "xlm-roberta",
  "camembert",
  "mpnet",
  "modernbert",
  "nomic_bert",
  "mobilebert",
  "squeezebert",
  "convbert",
  "ernie",
  "roformer",
  "esm",
  "xlm",
  "flaubert",
  "funnel",
  "jina_bert",
  "new",
]);

/** Families that are encoder-decoder even when the config does not say `is_encoder_decoder`. */
const ENCODER_DECODER = new Set([
  "t5",
  "mt5",
  "umt5",
  "longt5",
  "bart",
  "mbart",
  "marian",
  "pegasus",
  "whisper",
  "m2m_100",
  "nllb-moe",
  "blenderbot",
  "blenderbot-small",
  "led",
  "speecht5",
  "vision-encoder-decoder",
  "moonshine",
]);

const GENERATIVE_ARCH = /(ForCausalLM|LMHeadModel|ForConditionalGeneration|ForImageTextToText|ForVision2Seq)$/;

/** Does this config describe an image-text model (an image token, or a vision tower)? */
export function isImageTextConfig(config: Json): boolean {
  const num = (v: unknown) => typeof v === "number";
  return num(config.image_token_index) || num(config.image_token_id) || typeof config.vision_config === "object";
}

/**
 * The kind of model a `config.json` describes: encoder-only families
 * (BERT naming) do not generate; encoder-decoder ones (T5, BART, Whisper
 * naming, or `is_encoder_decoder`) run an encoder then a decoder;
 * image-text models carry a vision tower.
 *
 * @example
 * modelKind({ model_type: "bert", architectures: ["BertModel"] }) // → "encoder"
 */
export function modelKind(config: Json): ModelKind {
  const type = typeof config.model_type === "string" ? config.model_type : "";
  if (isImageTextConfig(config)) return "image-text";
  if (config.is_encoder_decoder === true || ENCODER_DECODER.has(type)) return "encoder-decoder";
  const archs = Array.isArray(config.architectures) ? config.architectures.filter((a) => typeof a === "string") : [];
  if (ENCODER_ONLY.has(type) && !archs.some((a) => GENERATIVE_ARCH.test(a))) return "encoder";
  if (config.is_decoder === false && archs.length && !archs.some((a) => GENERATIVE_ARCH.test(a))) return "encoder";
  return "decoder";
}

/** The file names (without `onnx/`, suffix and `.onnx`) each role may have, in the order they are tried. */
export function roleNames(config: Json): { role: FileRole; names: string[] }[] {
  const kind = modelKind(config);
  const textConfig = (config.text_config as Json | undefined) ?? {};
  const encoderDecoderVlm = config.is_encoder_decoder === true || textConfig.is_encoder_decoder === true;
  switch (kind) {
    case "decoder":
      return [{ role: "decoder", names: ["model", "decoder_model_merged", "decoder_model"] }];
    case "encoder":
      return [{ role: "encoder", names: ["model", "encoder_model"] }];
    case "encoder-decoder":
      return [
        { role: "encoder", names: ["encoder_model"] },
        { role: "decoder", names: ["decoder_model_merged", "decoder_model"] },
      ];
    case "image-text":
      return [
        { role: "vision_encoder", names: ["vision_encoder"] },
        { role: "embed_tokens", names: ["embed_tokens"] },
        ...(encoderDecoderVlm ? [{ role: "encoder" as const, names: ["encoder_model"] }] : []),
        { role: "decoder", names: ["decoder_model_merged", "model", "decoder_model"] },
      ];
  }
}

/** One ONNX file chosen for a role. */
export interface LayoutFile {
  readonly role: FileRole;
  readonly path: string;
  /** The dtype its name says (`fp32` for no suffix). */
  readonly dtype: string;
  /** The bytes, when finding the file meant reading it (no listing). */
  readonly bytes?: Uint8Array;
}

/** The files found for a model, and the roles no file was found for. */
export interface Layout {
  readonly kind: ModelKind;
  readonly files: readonly LayoutFile[];
  readonly missing: readonly { readonly role: FileRole; readonly tried: readonly string[] }[];
}

/** Candidate paths for one role, the asked dtype first, then fp32, then the other variants. */
function candidates(names: readonly string[], dtype: string | undefined): { path: string; dtype: string }[] {
  const order = [...new Set([dtype ?? "fp32", "fp32", ...Object.keys(DTYPE_SUFFIXES)])];
  const out: { path: string; dtype: string }[] = [];
  for (const name of names)
    for (const d of order) out.push({ path: `onnx/${name}${DTYPE_SUFFIXES[d] ?? ""}.onnx`, dtype: d });
  return out;
}

/**
 * Finds a model's ONNX files: for each role, the first existing name in the
 * layout's order, in the asked dtype (default fp32), else in any variant. With
 * a file listing (a folder, dropped files) nothing is read; without one
 * (fetched files) each candidate is read until one exists, and its bytes are
 * kept so they are not read twice.
 *
 * @example
 * await resolveLayout(files, { model_type: "gpt2" }, { list: ["onnx/decoder_model_merged_fp16.onnx"] })
 * // → { kind: "decoder", files: [{ role: "decoder", path: "onnx/decoder_model_merged_fp16.onnx", dtype: "fp16" }], missing: [] }
 */
export async function resolveLayout(
  files: FileSource,
  config: Json,
  options: { readonly dtype?: string; readonly list?: readonly string[] } = {},
): Promise<Layout> {
  if (options.dtype !== undefined && !(options.dtype in DTYPE_SUFFIXES))
    throw new Error(
      `dtype '${options.dtype}' is not one transformers.js names; expected one of ${Object.keys(DTYPE_SUFFIXES).join(", ")}`,
    );
  const listed = options.list ? new Set(options.list) : undefined;
  const found: LayoutFile[] = [];
  const missing: { role: FileRole; tried: string[] }[] = [];
  for (const { role, names } of roleNames(config)) {
    const tries = candidates(names, options.dtype);
    let hit: LayoutFile | undefined;
    for (const c of tries) {
      if (listed) {
        if (listed.has(c.path)) hit = { role, ...c };
      } else {
        try {
          hit = { role, ...c, bytes: await files(c.path) };
        } catch (error) {
          if (!(error instanceof MissingFileError)) throw error;
        }
      }
      if (hit) break;
    }
    if (hit) found.push(hit);
    else missing.push({ role, tried: [...new Set(names.map((n) => `onnx/${n}*.onnx`))] });
  }
  return { kind: modelKind(config), files: found, missing };
}
