/**
 * Bring your own model: an already-loaded transformers.js model and its
 * tokenizer, or an ONNX Runtime session, becomes a `Model` whose
 * capabilities are read from what it is — the session's outputs say whether
 * it returns logits and attention — rather than from a registry.
 */
import { CapabilityError, type Capability } from "../core/capability.ts";
import type { ModelSpec } from "../core/model.ts";
import type { AttentionStatus } from "./attention-status.ts";
import { modelKind } from "./layout.ts";
import { OrtModel } from "./ort-model.ts";
import { prepareAttention } from "./prepare-attention.ts";
import {
  MissingFileError,
  wrapOrtSession,
  type OrtSessionLike,
  type OrtTensorLike,
  type PlainTensor,
  type Session,
} from "./session.ts";
import { inferSpec, textConfig } from "./specs/infer.ts";
import { textCodec, type TextCodec } from "./text.ts";
import type { Tokenizer } from "@huggingface/tokenizers";

type Json = Record<string, unknown>;

/** The part of a transformers.js tokenizer `wrap` reads: the `tokenizers` Tokenizer inside it. */
export interface TransformersTokenizerLike {
  readonly _tokenizer: Tokenizer;
  readonly eos_token?: string | null;
}

/** The part of a transformers.js model `wrap` reads: its config and its ONNX Runtime sessions by name. */
export interface TransformersModelLike {
  readonly config: Json;
  readonly sessions: Readonly<Record<string, OrtSessionLike<OrtTensorLike>>>;
}

/** What `wrap` needs besides the model. */
export interface WrapOptions<T extends OrtTensorLike> {
  /** Makes the session's own Tensor from a plain one (e.g. `(t) => new ort.Tensor(t.type, t.data, t.dims)`). */
  readonly toOrt: (t: PlainTensor) => T;
  /** A name for the model (default: its `model_type`). */
  readonly key?: string;
  /** What the caller needs; refused up front when the model cannot give it. */
  readonly want?: readonly Capability[];
  /**
   * The graph the session was made from, when the caller has it: then the
   * attention-bias edit (`attention_write`) can make a second session from it.
   */
  readonly graph?: { readonly bytes: Uint8Array; readonly create: (bytes: Uint8Array) => Promise<OrtSessionLike<T>> };
}

function codecOf(tokenizer: TransformersTokenizerLike | Tokenizer | TextCodec, config: Json): TextCodec {
  if ("encode" in tokenizer && "stopIds" in tokenizer) return tokenizer;
  const eos = config.eos_token_id;
  const eosIds = Array.isArray(eos)
    ? eos.filter((e): e is number => typeof e === "number")
    : typeof eos === "number"
      ? [eos]
      : [];
  if ("_tokenizer" in tokenizer) return textCodec(tokenizer._tokenizer, eosIds, tokenizer.eos_token ?? undefined);
  return textCodec(tokenizer, eosIds);
}

/** The status of a session's attention, from its output names alone. */
function sessionAttention(outputs: readonly string[], layers: number, file: string): AttentionStatus {
  const exported = outputs.filter((o) => /^attentions\.\d+$/.test(o));
  const base = { file, layers, expected: layers, fused: [], inlined: [], unreachable: [] };
  if (!exported.length)
    return {
      ...base,
      source: "unreadable",
      found: 0,
      readable: false,
      writable: false,
      sites: [],
      reason: "the session was created from a graph without attention outputs, and a session cannot be edited",
      advice:
        "load the model through attentionTapCache (transformers.js) or loadOrtModel so its graph is tapped before the session exists, or pass the graph's bytes to wrap",
    };
  return {
    ...base,
    source: "exported",
    found: exported.length,
    readable: true,
    writable: false,
    sites: exported.map((output, layer) => ({ layer, output, places: [] })),
  };
}

/**
 * Wraps an ONNX Runtime session (onnxruntime-node or -web) of a decoder-only
 * or encoder-only model, with its tokenizer and `config.json`, as a `Model`:
 * `generate` when the session returns `logits` and the model is not
 * encoder-only, `attention` when it returns `attentions.{i}`,
 * `attention_write` when the graph's bytes are given too. The session stays
 * the caller's: `dispose()` releases only what the wrapper made.
 *
 * @example
 * const session = await ort.InferenceSession.create(bytes);
 * const model = await wrapSession(session, tokenizer, config, { toOrt: (t) => new ort.Tensor(t.type, t.data, t.dims) });
 * model.capabilities // → Set { "generate", "logits", "attention" }
 */
export async function wrapSession<T extends OrtTensorLike>(
  session: OrtSessionLike<T>,
  tokenizer: TransformersTokenizerLike | Tokenizer | TextCodec,
  config: Json,
  options: WrapOptions<T>,
): Promise<OrtModel> {
  const kind = modelKind(config);
  if (kind !== "decoder" && kind !== "encoder")
    throw new Error(
      `wrap() takes decoder-only and encoder-only models; a ${kind} model (${String(config.model_type)}) needs its folder: loadOrtModel, or the transformers backend`,
    );
  const key = options.key ?? String(config.model_type ?? "wrapped");
  const base = inferSpec(key, `wrapped ${key}`, config);
  const text = textConfig(config);
  const decoder: Session = wrapOrtSession(session, options.toOrt);
  let attentionStatus = sessionAttention(session.outputNames, text.layers, "the wrapped session");
  if (options.graph) {
    const prepared = prepareAttention(options.graph.bytes, {
      file: "the wrapped graph",
      layers: text.layers,
      heads: text.heads,
    });
    if (prepared.status.writable) attentionStatus = { ...attentionStatus, writable: true };
  }
  const capabilities = new Set<Capability>();
  if (session.outputNames.includes("logits")) {
    capabilities.add("logits");
    if (kind === "decoder") capabilities.add("generate");
  }
  if (attentionStatus.readable) capabilities.add("attention");
  if (attentionStatus.writable) capabilities.add("attention_write");
  const missing = (options.want ?? []).filter((c) => !capabilities.has(c));
  if (missing.length)
    throw new CapabilityError(
      missing,
      [...capabilities],
      `the wrapped ${key} (${attentionStatus.reason ?? `its outputs are ${session.outputNames.join(", ")}`})`,
    );
  const spec: ModelSpec = { ...base, capabilities };
  const graphBytes = options.graph?.bytes;
  return new OrtModel({
    spec,
    text,
    codec: codecOf(tokenizer, config),
    files: async (path) => {
      if (graphBytes) return graphBytes;
      throw new MissingFileError(path, "a wrapped session (no graph bytes were given)");
    },
    sessions: async (bytes) => wrapOrtSession(await options.graph!.create(bytes), options.toOrt),
    decoderPath: "the wrapped graph",
    vision: undefined,
    embed: undefined,
    decoder,
    lmHead: undefined,
    attentionStatus,
    kind,
    pastHeads: text.kvHeads,
    pastHeadDim: text.headDim,
    image: undefined,
    imageTokenId: undefined,
    ownsSessions: false,
  });
}

/**
 * Wraps an already-loaded transformers.js model and tokenizer
 * (`AutoModelForCausalLM.from_pretrained(id)`, `AutoTokenizer.from_pretrained(id)`)
 * as a white-box `Model` that runs on the model's own sessions. Its
 * capabilities are what those sessions return: load it through
 * `attentionTapCache` and its decoder returns attention.
 *
 * @example
 * env.useCustomCache = true; env.customCache = attentionTapCache(read);
 * const model = await wrap(await AutoModelForCausalLM.from_pretrained(id), await AutoTokenizer.from_pretrained(id),
 *   { toOrt: (t) => new Tensor(t.type, t.data, t.dims).ort_tensor });
 * (await model.forward({ prompt: "3 1 4" }, { reductions: ["sinkMass"] })).reductions.sinkMass // → [layers, heads]
 */
export async function wrap<T extends OrtTensorLike>(
  model: TransformersModelLike,
  tokenizer: TransformersTokenizerLike | Tokenizer | TextCodec,
  options: WrapOptions<T>,
): Promise<OrtModel> {
  const names = Object.keys(model.sessions);
  const session = model.sessions.model ?? model.sessions.decoder_model_merged;
  if (!session)
    throw new Error(
      `wrap(): the model has sessions [${names.join(", ")}], none of them a decoder ('model' or 'decoder_model_merged'); image-text and encoder-decoder models load from their folder (loadOrtModel) or the transformers backend`,
    );
  if (names.some((n) => n === "vision_encoder" || n === "encoder_model"))
    throw new Error(
      `wrap() takes text models; this one has sessions [${names.join(", ")}]: load its folder with loadOrtModel`,
    );
  return wrapSession(session as OrtSessionLike<T>, tokenizer, model.config, options);
}
