import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { CapabilityError, type Capability } from "../core/capability.ts";
import type {
  AttentionBias,
  CaptureOptions,
  GenerateOptions,
  LoadOptions,
  Model,
  ModelInput,
  ModelSpec,
  Reduction,
  Trace,
  TraceTensor,
} from "../core/model.ts";
import { imageProcessing, pixelValues, toRgb, type ImageProcessing } from "./image.ts";
import { PixelCache } from "./pixel-cache.ts";
import type { AttentionStatus } from "./attention-status.ts";
import { planModel, type ModelPlan } from "./inspect.ts";
import type { ModelKind } from "./layout.ts";
import { prepareAttention } from "./prepare-attention.ts";
import * as R from "./reductions.ts";
import {
  asFloat32,
  f32,
  i64,
  MissingFileError,
  readJson,
  type FileSource,
  type PlainTensor,
  type RunOptions,
  type Session,
  type SessionFactory,
} from "./session.ts";
import type { TextConfig } from "./specs/infer.ts";
import { loadTextCodec, type TextCodec } from "./text.ts";

/**
 * Where a loaded model's attention comes from, in short (the full account is
 * the model's `attentionStatus`): exported as graph outputs, tapped from the
 * graph's softmaxes (after decomposing fused ops, when it had them), or not
 * readable, with the reason and what to do.
 */
export type AttentionSource =
  | { readonly kind: "exported" }
  | { readonly kind: "tapped"; readonly tensors: readonly string[] }
  | { readonly kind: "unreadable"; readonly reason: string };

/** The short form of an attention status. */
export function attentionSource(status: AttentionStatus): AttentionSource {
  if (status.source === "exported") return { kind: "exported" };
  if (status.readable) return { kind: "tapped", tensors: status.sites.map((s) => s.places[0]?.tensor ?? s.output) };
  const reason = status.reason ?? "attention not readable in this export";
  return {
    kind: "unreadable",
    reason: `${/^attention not readable/.test(reason) ? "" : "attention not readable in this export: "}${reason}${status.advice ? ` (what to do: ${status.advice})` : ""}`,
  };
}

/** What was generated, token by token. */
export interface Generation {
  readonly text: string;
  /** Generated ids (the stop token excluded). */
  readonly ids: readonly number[];
  readonly promptLength: number;
  /** Why generation ended. */
  readonly stop: "eos" | "max_tokens" | "stop_string" | "context";
}

/** Generation options, plus an attention bias applied at every step (an `attention_write` intervention). */
export interface OrtGenerateOptions extends GenerateOptions {
  readonly attentionBias?: AttentionBias;
  /**
   * `false`: every session run is computed, none answered from or kept in a memo, none counted toward a memo's hit
   * rate (see `memoSession`), and the image's pixel values are made afresh, not kept: a warm-up's made-up inputs
   * would otherwise fill the memos and the pixel cache, and could switch a memo off.
   */
  readonly memo?: boolean;
}

const ATTENTION_REDUCTIONS: readonly Reduction[] = [
  "imageAttentionShare",
  "attentionEntropy",
  "sinkMass",
  "imageAttentionMap",
  "rollout",
  "fullAttention",
];
const LOGIT_LENS_K = 5;

/** Thrown when a call was cancelled through its AbortSignal. */
export class CancelledError extends Error {
  override readonly name = "CancelledError";
  constructor(what: string) {
    super(`${what} was cancelled`);
  }
}

function checkSignal(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new CancelledError(what);
}

async function createSession(factory: SessionFactory, bytes: Uint8Array, name: string): Promise<Session> {
  try {
    return await factory(bytes, { name });
  } catch (error) {
    throw new Error(
      `${name} could not be loaded as an ONNX model (corrupt or truncated?): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** A JSON file a model folder may lack (`{}` then); one that is there must parse. */
async function readOptionalJson(files: FileSource, path: string): Promise<Record<string, unknown>> {
  try {
    return await readJson(files, path);
  } catch (error) {
    if (error instanceof MissingFileError) return {};
    throw error;
  }
}

/** How to find and open a model folder. */
export interface OrtLoadOptions extends LoadOptions {
  /** A spec to use instead of inferring one from config.json (registered bundled models). */
  readonly spec?: ModelSpec;
  /** Registry key or folder name for an inferred spec. */
  readonly key?: string;
  /** Where the files come from, for messages and the spec's `source`. */
  readonly source?: string;
  /** The dtype variant to load (transformers.js's names: fp32, fp16, q8, q4, …); default fp32, else what is there. */
  readonly dtype?: string;
  /** An inspection already made of these files (`planModel`), so nothing is read twice. */
  readonly plan?: ModelPlan;
}

/**
 * Loads a model folder in the layouts transformers.js models are published in
 * (`onnx/model.onnx`, `onnx/decoder_model_merged.onnx`, dtype variants, the
 * llava multi-session split, encoder-only graphs) through the injected file
 * source and session factory. The folder is inspected first from its config
 * files and protobufs (`planModel`): the decoder's attention is made readable
 * (functions inlined, fused ops decomposed, softmaxes tapped) before its
 * session is created, and a model the runtime cannot run is refused before
 * any session exists, with the reason.
 *
 * @example
 * const model = await loadOrtModel(nodeFiles("models/tiny-vlm"), nodeSessions, { key: "tiny-vlm" });
 * await model.generate({ prompt: "<image> is there a red circle ?", image: png }) // → "yes"
 */
export async function loadOrtModel(
  files: FileSource,
  sessions: SessionFactory,
  options: OrtLoadOptions = {},
): Promise<OrtModel> {
  const where = options.source ?? options.key ?? "the model folder";
  const progress = (stage: string, done: number, total: number) => options.onProgress?.({ stage, done, total });
  progress("reading the model's config and graphs", 0, 1);
  const plan =
    options.plan ??
    (await planModel(files, {
      ...(options.key ? { key: options.key } : {}),
      source: where,
      ...(options.spec ? { spec: options.spec } : {}),
      ...(options.dtype ? { dtype: options.dtype } : {}),
    }));
  checkSignal(options.signal, "loading");
  if (!plan.load) throw new Error(plan.problem);
  if (!plan.inspection.runtime.runs)
    throw new Error(`${where} cannot be run by the ort runtime: ${plan.inspection.runtime.reason}`);
  const { spec, text, layout, primary, bytes } = plan.load;
  const genConfig = await readOptionalJson(files, "generation_config.json");
  const genEos = genConfig.eos_token_id;
  const eos = [...text.eosIds, ...(Array.isArray(genEos) ? genEos : typeof genEos === "number" ? [genEos] : [])];
  const codec = await loadTextCodec(files, eos);
  checkSignal(options.signal, "loading");

  const pathOf = (role: string) => layout.files.find((f) => f.role === role)?.path;
  const visionPath = pathOf("vision_encoder");
  const embedPath = pathOf("embed_tokens");
  const imageModel = plan.inspection.kind === "image-text";
  if (imageModel && (!visionPath || !embedPath))
    throw new Error(
      `${where} lacks ${[!visionPath && "onnx/vision_encoder*.onnx", !embedPath && "onnx/embed_tokens*.onnx"].filter(Boolean).join(" and ")}: an image-text model needs its vision encoder and token embeddings`,
    );
  const withHead = spec.capabilities.has("hidden_states");
  const total = (imageModel ? 3 : 1) + (withHead ? 1 : 0);
  let done = 0;
  const open = async (path: string, data: Uint8Array) => {
    progress(`loading ${path}`, done, total);
    const session = await createSession(sessions, data, path);
    checkSignal(options.signal, "loading");
    progress(`loaded ${path}`, ++done, total);
    return session;
  };
  const opened: Session[] = [];
  try {
    const vision = imageModel ? await open(visionPath!, bytes.get(visionPath!)!) : undefined;
    if (vision) opened.push(vision);
    const embed = imageModel ? await open(embedPath!, bytes.get(embedPath!)!) : undefined;
    if (embed) opened.push(embed);
    const decoder = await open(primary.path, primary.prepared.bytes);
    opened.push(decoder);
    let lmHead: Session | undefined;
    if (withHead) {
      const head = bytes.get("onnx/lm_head.onnx") ?? (await files("onnx/lm_head.onnx"));
      lmHead = await open("onnx/lm_head.onnx", head);
      opened.push(lmHead);
    }
    progress("ready", total, total);
    const declared = primary.graph.declared;
    const pastDims = declared.get("past_key_values.0.key")?.dims;
    return new OrtModel({
      spec,
      text,
      codec,
      files,
      sessions,
      decoderPath: primary.path,
      vision,
      embed,
      decoder,
      lmHead,
      attentionStatus: primary.prepared.status,
      kind: plan.inspection.kind,
      pastHeads: typeof pastDims?.[1] === "number" ? pastDims[1] : text.kvHeads,
      pastHeadDim: typeof pastDims?.[3] === "number" ? pastDims[3] : text.headDim,
      image: imageModel ? imageProcessing(plan.load.preprocessor!) : undefined,
      imageTokenId: spec.image?.tokenId,
    });
  } catch (error) {
    await Promise.all(opened.map((s) => s.release().catch(() => undefined)));
    throw error;
  }
}

/** What an `OrtModel` is made of: its spec, tokenizer, sessions and what the graphs said (built by the loader or `wrap`). */
export interface OrtModelParts {
  spec: ModelSpec;
  text: TextConfig;
  codec: TextCodec;
  files: FileSource;
  sessions: SessionFactory;
  decoderPath: string;
  vision: Session | undefined;
  embed: Session | undefined;
  decoder: Session;
  lmHead: Session | undefined;
  attentionStatus: AttentionStatus;
  kind: ModelKind;
  /** KV heads and head size of the past inputs (from the graph's declared shapes, else the config). */
  pastHeads: number;
  pastHeadDim: number;
  image: ImageProcessing | undefined;
  imageTokenId: number | undefined;
  /** False when the sessions belong to the caller (`wrap`): `dispose` then releases only the sessions it made. */
  ownsSessions?: boolean;
}

interface Encoded {
  ids: number[];
  imagePositions: number[];
  /** Image features [N, D] when the input had an image: read only (a memoised vision encoder may keep this array). */
  readonly features?: Float32Array;
}

/** A model run white-box on ONNX Runtime: generation with a KV cache, and forwards that return reductions. */
export class OrtModel implements Model {
  readonly spec: ModelSpec;
  readonly capabilities: ReadonlySet<Capability>;
  /** Where attention comes from, in short. */
  readonly attention: AttentionSource;
  /** The decoder's full attention status (plain data): found, layers, sites, fused ops, reason, advice. */
  readonly attentionStatus: AttentionStatus;
  readonly codec: TextCodec;
  private readonly p: OrtModelParts;
  private readonly pastNames: string[];
  private readonly attentionNames: string[];
  private readonly hiddenNames: string[];
  private readonly useCacheBranch: boolean;
  private readonly tokenTypes: boolean;
  private readonly hasLogits: boolean;
  private biased?: Promise<{ session: Session; inputs: readonly string[] }>;
  /** Each image's `pixel_values`, made once per content (32 MiB: a few dozen images of a real VLM's size). */
  private readonly pixelCache = new PixelCache(32 * 2 ** 20);
  private disposed = false;

  constructor(parts: OrtModelParts) {
    this.p = parts;
    this.spec = parts.spec;
    this.attentionStatus = parts.attentionStatus;
    this.attention = attentionSource(parts.attentionStatus);
    this.codec = parts.codec;
    this.pastNames = parts.decoder.inputNames.filter((n) => /^past_key_values\.\d+\.(key|value)$/.test(n));
    this.attentionNames = parts.decoder.outputNames.filter((n) => /^attentions\.\d+$/.test(n)).sort(byIndex);
    this.hiddenNames = parts.decoder.outputNames.filter((n) => /^hidden_states\.\d+$/.test(n)).sort(byIndex);
    this.useCacheBranch = parts.decoder.inputNames.includes("use_cache_branch");
    this.tokenTypes = parts.decoder.inputNames.includes("token_type_ids");
    this.hasLogits = parts.decoder.outputNames.includes("logits");
    // Decided from the graphs before the sessions existed (planModel); the sessions only confirm it.
    this.capabilities = parts.spec.capabilities;
  }

  /** Tokenizes a prompt (BOS added as the tokenizer says), expands the image token, embeds the image. */
  private async encode(input: ModelInput, run: RunOptions = {}): Promise<Encoded> {
    if (typeof input?.prompt !== "string") throw new Error("model input: expected { prompt: string, image? }");
    const ids = this.p.codec.encode(input.prompt, true);
    const imageToken = this.p.imageTokenId;
    const at = imageToken === undefined ? -1 : ids.indexOf(imageToken);
    if (input.image !== undefined) {
      if (!this.p.vision || !this.p.image || !this.spec.image)
        throw new Error(`${this.spec.key} takes text only: drop the image, or use an image model`);
      if (at < 0)
        throw new Error(
          `the prompt has no ${this.p.codec.token(imageToken!)} token: put it where the image goes, e.g. "${this.p.codec.token(imageToken!)} ${input.prompt}"`,
        );
    } else if (at >= 0) {
      throw new Error(`the prompt has an image token but no image was given`);
    }
    let imagePositions: number[] = [];
    let features: Float32Array | undefined;
    if (input.image !== undefined) {
      const [rows, cols] = this.spec.image!.grid;
      const count = rows * cols;
      ids.splice(at, 1, ...new Array<number>(count).fill(imageToken!));
      imagePositions = Array.from({ length: count }, (_, i) => at + i);
      const image = input.image;
      const make = () => pixelValues(toRgb(image), this.p.image!);
      // Not memoised, not cached either: a warm-up's made-up images would only push real ones out.
      const pixels = run.memo === false ? make() : this.pixelCache.get(image, make);
      // Borrowed: the features are only read (copied into the embeddings' image rows); one image's features were
      // copied out of the memo once per question asked of it, 60 MB over the demo investigation.
      const out = await this.p.vision!.run(
        { pixel_values: f32(pixels, [1, 3, this.p.image!.height, this.p.image!.width]) },
        ["image_features"],
        { ...run, borrow: true },
      );
      const feats = out.image_features!;
      if (feats.dims[1] !== count)
        throw new Error(
          `the vision encoder gave ${feats.dims[1]} image features but the grid has ${count} image tokens`,
        );
      features = asFloat32(feats);
    }
    if (ids.length > this.spec.contextLength)
      throw new Error(
        `the prompt is ${ids.length} tokens${imagePositions.length ? ` (${imagePositions.length} of them image tokens)` : ""}, over ${this.spec.key}'s context length of ${this.spec.contextLength}: shorten it`,
      );
    return { ids, imagePositions, ...(features ? { features } : {}) };
  }

  /** The decoder's first input for `ids`: token embeddings (image rows replaced) or the ids themselves. */
  private async decoderInput(
    ids: readonly number[],
    encoded?: Encoded,
    offset = 0,
    run: RunOptions = {},
  ): Promise<Record<string, PlainTensor>> {
    const idsTensor = i64(ids, [1, ids.length]);
    if (!this.p.embed) return { input_ids: idsTensor };
    const out = await this.p.embed.run({ input_ids: idsTensor }, ["inputs_embeds"], run);
    const embeds = asFloat32(out.inputs_embeds!);
    const D = this.spec.hiddenSize;
    if (encoded?.features) {
      encoded.imagePositions.forEach((pos, i) => {
        const local = pos - offset;
        if (local >= 0 && local < ids.length) embeds.set(encoded.features!.subarray(i * D, (i + 1) * D), local * D);
      });
    }
    return { inputs_embeds: f32(embeds, [1, ids.length, D]) };
  }

  private emptyPast(): Record<string, PlainTensor> {
    const past: Record<string, PlainTensor> = {};
    for (const name of this.pastNames)
      past[name] = f32(new Float32Array(0), [1, this.p.pastHeads, 0, this.p.pastHeadDim]);
    return past;
  }

  /**
   * The inputs some layouts add: a merged decoder's `use_cache_branch` (true
   * once there is a past), an encoder's `token_type_ids` (all segment 0).
   */
  private stepFeeds(length: number, offset: number): Record<string, PlainTensor> {
    const feeds: Record<string, PlainTensor> = {};
    if (this.useCacheBranch)
      feeds.use_cache_branch = { type: "bool", data: Uint8Array.of(offset > 0 ? 1 : 0), dims: [1] };
    if (this.tokenTypes) feeds.token_type_ids = i64(new Array<number>(length).fill(0), [1, length]);
    return feeds;
  }

  /** The bias inputs for one decoder call: [1, heads, 1, total] per layer, zero except where `bias` says. */
  private biasFeeds(
    names: readonly string[],
    bias: AttentionBias | undefined,
    total: number,
    imagePositions: readonly number[],
  ): Record<string, PlainTensor> {
    const H = this.spec.heads;
    const feeds: Record<string, PlainTensor> = {};
    const positions = bias ? (bias.positions === "image" ? imagePositions : bias.positions) : [];
    if (bias && bias.positions === "image" && imagePositions.length === 0)
      throw new Error("attentionBias on 'image' positions, but this input has no image tokens");
    for (const p of positions)
      if (!Number.isInteger(p) || p < 0 || p >= total)
        throw new Error(`attentionBias: position ${p} is outside 0…${total - 1}`);
    names.forEach((name, layer) => {
      const data = new Float32Array(H * total);
      if (bias && (!bias.layers || bias.layers.includes(layer))) {
        for (let h = 0; h < H; h++) {
          if (bias.heads && !bias.heads.includes(h)) continue;
          for (const p of positions) data[h * total + p] = bias.value;
        }
      }
      feeds[name] = f32(data, [1, H, 1, total]);
    });
    return feeds;
  }

  /** The attention-bias-edited decoder, made on first use (a separate session; the shipped one is untouched). */
  private biasedDecoder(): Promise<{ session: Session; inputs: readonly string[] }> {
    if (!this.capabilities.has("attention_write"))
      return Promise.reject(
        new CapabilityError(["attention_write"], [...this.capabilities], `${this.spec.key} (${this.unreadable()})`),
      );
    this.biased ??= (async () => {
      // Read again rather than kept: a decoder can be most of the model's memory.
      const bytes = await this.p.files(this.p.decoderPath);
      const edited = prepareAttention(bytes, { file: this.p.decoderPath, heads: this.spec.heads, bias: true });
      const session = await createSession(this.p.sessions, edited.bytes, `${this.p.decoderPath} (attention-bias edit)`);
      return { session, inputs: edited.biasInputs };
    })();
    return this.biased;
  }

  /** Why attention cannot be read or written, for error messages. */
  private unreadable(): string {
    const s = this.attentionStatus;
    if (s.readable && !s.writable)
      return `the attention-bias edit cannot reach every attention softmax of ${s.file}${s.reason ? `: ${s.reason}` : ""}`;
    return this.attention.kind === "unreadable" ? this.attention.reason : (s.reason ?? "attention is not readable");
  }

  private async decoderFor(bias: AttentionBias | undefined) {
    if (!bias) return { session: this.p.decoder, inputs: [] as readonly string[] };
    return this.biasedDecoder();
  }

  /**
   * Generates a continuation: greedy by default, sampled with `temperature` >
   * 0 (seeded, reproducible), with a KV cache; stops at EOS, a stop string,
   * `maxNewTokens` (default 32) or the context length.
   */
  async generateTokens(input: ModelInput, options: OrtGenerateOptions = {}): Promise<Generation> {
    this.checkAlive();
    if (!this.capabilities.has("generate"))
      throw new CapabilityError(
        ["generate"],
        [...this.capabilities],
        `${this.spec.key} (${this.p.kind === "encoder" ? "an encoder-only model" : `${this.p.decoderPath} has no logits output`}: it does not generate)`,
      );
    const maxNew = options.maxNewTokens ?? 32;
    const temperature = options.temperature ?? 0;
    if (!(maxNew >= 0) || !Number.isInteger(maxNew))
      throw new Error(`generate: maxNewTokens must be a whole number ≥ 0, got ${maxNew}`);
    if (!(temperature >= 0)) throw new Error(`generate: temperature must be ≥ 0, got ${temperature}`);
    const rng = xoroshiro128plus(options.seed ?? 0);
    const run: RunOptions = options.memo === false ? { memo: false } : {};
    const encoded = await this.encode(input, run);
    const { session, inputs: biasNames } = await this.decoderFor(options.attentionBias);
    const presentNames = this.pastNames.map((n) => n.replace("past_key_values", "present"));
    const fetches = ["logits", ...presentNames];
    let past = this.emptyPast();
    let step = encoded.ids;
    let offset = 0;
    const generated: number[] = [];
    let stop: Generation["stop"] = "max_tokens";
    const V = this.spec.vocabSize;
    while (generated.length < maxNew) {
      checkSignal(options.signal, "generation");
      const total = offset + step.length;
      const feeds: Record<string, PlainTensor> = {
        ...(await this.decoderInput(step, encoded, offset, run)),
        attention_mask: i64(new Array<number>(total).fill(1), [1, total]),
        position_ids: i64(
          Array.from({ length: step.length }, (_, i) => offset + i),
          [1, step.length],
        ),
        ...past,
        ...this.stepFeeds(step.length, offset),
        ...this.biasFeeds(biasNames, options.attentionBias, total, encoded.imagePositions),
      };
      // Borrowed: the feeds are built fresh for this step, the logits only read, the presents only fed back in.
      const out = await session.run(feeds, fetches, { ...run, borrow: true });
      const logits = asFloat32(out.logits!);
      const vocab = out.logits!.dims[2] ?? V;
      const last = logits.subarray((step.length - 1) * vocab, step.length * vocab);
      let next: number;
      if (temperature === 0) next = R.topK(last, 1)[0]!;
      else next = sample(last, temperature, options.topK, rng);
      if (this.p.codec.stopIds.has(next)) {
        stop = "eos";
        break;
      }
      generated.push(next);
      if (options.stop?.length) {
        const text = this.p.codec.decode(generated);
        if (options.stop.some((s) => text.includes(s))) {
          stop = "stop_string";
          break;
        }
      }
      if (total + 1 > this.spec.contextLength) {
        stop = "context";
        break;
      }
      if (this.pastNames.length) {
        past = {};
        this.pastNames.forEach((name, i) => (past[name] = out[presentNames[i]!]!));
        offset = total;
        step = [next];
      } else step = [...step, next]; // a decoder without a KV cache recomputes the whole sequence
    }
    let text = this.p.codec.decode(generated);
    if (stop === "stop_string") {
      const cut = Math.min(...options.stop!.map((s) => text.indexOf(s)).filter((i) => i >= 0));
      text = text.slice(0, cut);
    }
    return { text: text.trim(), ids: generated, promptLength: encoded.ids.length, stop };
  }

  async generate(input: ModelInput, options?: OrtGenerateOptions): Promise<string> {
    return (await this.generateTokens(input, options)).text;
  }

  /**
   * One teacher-forced forward over prompt (+ `answer`), returning the
   * tokens and only the asked reductions. Query positions for attention
   * reductions are the positions that predict the answer tokens (the last
   * prompt token when there is no answer).
   */
  async forward(input: ModelInput, capture: CaptureOptions = {}): Promise<Trace> {
    this.checkAlive();
    const reductions = capture.reductions ?? [];
    const wantsAttention = reductions.some((r) => ATTENTION_REDUCTIONS.includes(r));
    const missing: Capability[] = [
      ...(wantsAttention && !this.capabilities.has("attention") ? (["attention"] as const) : []),
      ...(capture.attentionBias && !this.capabilities.has("attention_write") ? (["attention_write"] as const) : []),
    ];
    if (missing.length) {
      throw new CapabilityError(missing, [...this.capabilities], `${this.spec.key} (${this.unreadable()})`);
    }
    if ((reductions.includes("finalHidden") || reductions.includes("hiddenStates")) && !this.hiddenNames.length)
      throw new CapabilityError(
        ["hidden_states"],
        [...this.capabilities],
        `${this.spec.key} (${this.p.decoderPath} has no hidden_states outputs)`,
      );
    if (reductions.includes("logitLens") && !this.capabilities.has("hidden_states"))
      throw new CapabilityError(
        ["hidden_states"],
        [...this.capabilities],
        `${this.spec.key} (no hidden_states outputs or lm_head.onnx for the logit lens)`,
      );
    const needsLogits =
      reductions.some((r) => r === "tokenEntropy" || r === "tokenLogprob") || !!capture.logitsAt?.length;
    if (needsLogits && !this.hasLogits)
      throw new CapabilityError(
        ["logits"],
        [...this.capabilities],
        `${this.spec.key} (${this.p.decoderPath} has no logits output: an encoder without a language-model head)`,
      );
    const encoded = await this.encode(input);
    const promptLength = encoded.ids.length;
    const answerIds = capture.answer ? this.p.codec.encode(capture.answer, false) : [];
    const ids = [...encoded.ids, ...answerIds];
    const T = ids.length;
    if (T > this.spec.contextLength)
      throw new Error(
        `prompt + answer is ${T} tokens, over ${this.spec.key}'s context length of ${this.spec.contextLength}: shorten them`,
      );
    checkSignal(capture.signal, "forward");
    const { session, inputs: biasNames } = await this.decoderFor(capture.attentionBias);
    const fetches = [
      ...(this.hasLogits ? ["logits"] : []),
      ...(wantsAttention ? this.attentionNames : []),
      ...(reductions.includes("logitLens") || reductions.includes("hiddenStates") ? this.hiddenNames : []),
      ...(reductions.includes("finalHidden") &&
      !reductions.includes("logitLens") &&
      !reductions.includes("hiddenStates")
        ? this.hiddenNames.slice(-1)
        : []),
    ];
    const out = await session.run(
      {
        ...(await this.decoderInput(ids, encoded)),
        attention_mask: i64(new Array<number>(T).fill(1), [1, T]),
        position_ids: i64(
          Array.from({ length: T }, (_, i) => i),
          [1, T],
        ),
        ...this.emptyPast(),
        ...this.stepFeeds(T, 0),
        ...this.biasFeeds(biasNames, capture.attentionBias, T, encoded.imagePositions),
      },
      fetches,
      // Borrowed: every reduction and the logits handed back are new arrays; the outputs themselves are only read.
      { borrow: true },
    );
    checkSignal(capture.signal, "forward");
    const answerPositions = Int32Array.from(answerIds, (_, i) => promptLength + i);
    const queries = answerIds.length ? Array.from(answerIds, (_, i) => promptLength - 1 + i) : [promptLength - 1];
    const result: Partial<Record<Reduction, TraceTensor>> = {};
    const logits = this.hasLogits ? asFloat32(out.logits!) : new Float32Array(0);
    const vocab = this.hasLogits ? out.logits!.dims[2]! : 0;
    if (wantsAttention) {
      const att: R.AttentionStack = {
        layers: this.attentionNames.map((n) => asFloat32(out[n]!)),
        heads: this.spec.heads,
        length: T,
      };
      const grid = this.spec.image?.grid;
      const needsImage = (r: Reduction) => {
        if (!grid || encoded.imagePositions.length === 0)
          throw new Error(`reduction '${r}' needs an image input on an image model`);
        return grid;
      };
      const lastPrompt = promptLength - 1;
      for (const r of reductions) {
        if (r === "imageAttentionShare") {
          needsImage(r);
          result[r] = R.imageAttentionShare(att, queries, encoded.imagePositions);
        } else if (r === "attentionEntropy") result[r] = R.attentionEntropy(att, queries);
        else if (r === "sinkMass") result[r] = R.sinkMass(att, queries);
        else if (r === "imageAttentionMap")
          result[r] = R.imageAttentionMap(att, lastPrompt, encoded.imagePositions, needsImage(r));
        else if (r === "rollout") result[r] = R.rollout(att, lastPrompt, encoded.imagePositions, needsImage(r));
        else if (r === "fullAttention") result[r] = R.fullAttention(att);
      }
    }
    if (reductions.includes("tokenEntropy") || reductions.includes("tokenLogprob")) {
      const logZ = R.logPartition(logits, vocab);
      if (reductions.includes("tokenEntropy")) result.tokenEntropy = R.tokenEntropy(logits, vocab, logZ);
      if (reductions.includes("tokenLogprob")) result.tokenLogprob = R.tokenLogprob(logits, vocab, ids, logZ);
    }
    if (reductions.includes("logitLens")) {
      const D = this.spec.hiddenSize;
      const states = this.hiddenNames.length;
      const at = queries[0]!;
      const stacked = new Float32Array(states * D);
      this.hiddenNames.forEach((n, s) => stacked.set(asFloat32(out[n]!).subarray(at * D, (at + 1) * D), s * D));
      const lens = await this.p.lmHead!.run({ hidden_states: f32(stacked, [1, states, D]) });
      const lensLogits = Object.values(lens)[0]!;
      result.logitLens = R.logitLens(asFloat32(lensLogits), lensLogits.dims[2]!, LOGIT_LENS_K);
    }
    if (reductions.includes("finalHidden")) {
      const D = this.spec.hiddenSize;
      const last = asFloat32(out[this.hiddenNames[this.hiddenNames.length - 1]!]!);
      const data = new Float32Array(queries.length * D);
      queries.forEach((q, i) => data.set(last.subarray(q * D, (q + 1) * D), i * D));
      result.finalHidden = { data, shape: [queries.length, D], axes: ["query", "hidden"] };
    }
    if (reductions.includes("hiddenStates")) {
      const D = this.spec.hiddenSize;
      const data = new Float32Array(this.hiddenNames.length * T * D);
      this.hiddenNames.forEach((n, s) => data.set(asFloat32(out[n]!).subarray(0, T * D), s * T * D));
      result.hiddenStates = { data, shape: [this.hiddenNames.length, T, D], axes: ["state", "position", "hidden"] };
    }
    let logitsOut: Trace["logits"];
    if (capture.logitsAt?.length) {
      const positions = Int32Array.from(capture.logitsAt, (p) => {
        const q = p < 0 ? T + p : p;
        if (!Number.isInteger(q) || q < 0 || q >= T)
          throw new Error(`logitsAt: position ${p} is outside a ${T}-token sequence`);
        return q;
      });
      const values = new Float32Array(positions.length * vocab);
      positions.forEach((q, i) => values.set(logits.subarray(q * vocab, (q + 1) * vocab), i * vocab));
      logitsOut = { positions, values, vocab };
    }
    return {
      tokens: ids.map((id) => this.p.codec.token(id)),
      tokenIds: Int32Array.from(ids),
      imagePositions: Int32Array.from(encoded.imagePositions),
      answerPositions,
      ...(logitsOut ? { logits: logitsOut } : {}),
      reductions: result,
    };
  }

  private checkAlive(): void {
    if (this.disposed) throw new Error(`${this.spec.key} was disposed: load it again`);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const sessions = this.p.ownsSessions === false ? [] : [this.p.vision, this.p.embed, this.p.decoder, this.p.lmHead];
    const biased = this.biased ? await this.biased.catch(() => undefined) : undefined;
    if (biased) sessions.push(biased.session);
    await Promise.all(sessions.map((s) => s?.release()));
  }
}

function byIndex(a: string, b: string): number {
  return Number(a.split(".").pop()) - Number(b.split(".").pop());
}

type Rng = ReturnType<typeof xoroshiro128plus>;

/** Samples an id from softmax(logits / temperature), optionally among the top k. */
function sample(logits: Float32Array, temperature: number, topK: number | undefined, rng: Rng): number {
  const candidates = topK && topK > 0 ? R.topK(logits, topK) : Array.from(logits.keys());
  let max = -Infinity;
  for (const id of candidates) max = Math.max(max, logits[id]! / temperature);
  const weights = candidates.map((id) => Math.exp(logits[id]! / temperature - max));
  const total = weights.reduce((a, b) => a + b, 0);
  const hi = rng.next();
  const lo = rng.next();
  // 53-bit uniform in [0, 1) from two 32-bit outputs, so Node and browser draw the same.
  const u = (((hi >>> 0) >>> 5) * 67108864 + ((lo >>> 0) >>> 6)) / 9007199254740992;
  let acc = 0;
  const target = u * total;
  for (let i = 0; i < candidates.length; i++) {
    acc += weights[i]!;
    if (target < acc) return candidates[i]!;
  }
  return candidates[candidates.length - 1]!;
}
