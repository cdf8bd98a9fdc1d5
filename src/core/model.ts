import type { Capability } from "./capability.ts";

/** An input modality a model accepts. */
export type Modality = "text" | "image" | "audio";

/**
 * What a model *is*, independent of how it is run: its family, files,
 * modalities, sizes, and where its internals can be read. Registered specs
 * live in `src/models/specs`; any other folder or hub id gets one inferred from
 * its `config.json`.
 */
export interface ModelSpec {
  /** Registry key, e.g. `"tiny-vlm"`, or the hub id / folder it was inferred from. */
  readonly key: string;
  /** Architecture family as `config.json` names it (`"llava"`, `"llama"`, …). */
  readonly family: string;
  readonly modalities: ReadonlySet<Modality>;
  /** Where the files are: a URL or path prefix, or a hub id. */
  readonly source: string;
  /** File names relative to `source` that make up the model. */
  readonly files: readonly string[];
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly hiddenSize: number;
  readonly vocabSize: number;
  readonly contextLength: number;
  /** For image models: the token id whose rows become image features, and the grid they form. */
  readonly image?: {
    readonly tokenId: number;
    readonly grid: readonly [rows: number, cols: number];
    readonly size: readonly [height: number, width: number];
  };
  /** Capabilities this model's files allow (attention is absent for fused-attention exports). */
  readonly capabilities: ReadonlySet<Capability>;
}

/** How a model is run: white-box ONNX Runtime, transformers.js generation, or a black-box API. */
export interface Backend {
  readonly kind: "ort" | "transformers" | "api";
  /** What this backend can give for a model with the given spec. */
  provides(spec: ModelSpec): ReadonlySet<Capability>;
  load(spec: ModelSpec, options?: LoadOptions): Promise<Model>;
}

export interface LoadOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
}

/** Progress of a long call: `done` of `total` units, with what is being done. */
export interface Progress {
  readonly stage: string;
  readonly done: number;
  readonly total: number;
}

/** One model input: a prompt and, for image models, the image bytes. */
export interface ModelInput {
  readonly prompt: string;
  /** Encoded image (PNG/JPEG bytes) or already-decoded RGBA pixels. */
  readonly image?: Uint8Array | ImagePixels;
}

/** Decoded RGBA pixels, row-major. */
export interface ImagePixels {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array | Uint8ClampedArray;
}

export interface GenerateOptions {
  readonly maxNewTokens?: number;
  /** 0 (default) is greedy; above 0 samples with this temperature. */
  readonly temperature?: number;
  readonly topK?: number;
  readonly seed?: number;
  readonly stop?: readonly string[];
  readonly signal?: AbortSignal;
  /** Additive bias on attention logits at every step (an `attention_write` intervention); white-box backends only. */
  readonly attentionBias?: AttentionBias;
}

/** The reductions of attention and hidden states an analyzer can ask for. */
export type Reduction =
  | "imageAttentionShare"
  | "attentionEntropy"
  | "sinkMass"
  | "imageAttentionMap"
  | "rollout"
  | "tokenEntropy"
  | "tokenLogprob"
  | "logitLens"
  | "fullAttention"
  /** The last hidden state (the language-model head's input) at the query positions: [queries, hidden]. */
  | "finalHidden"
  /** Every hidden state (the embeddings, then each layer's output) at every position: [states, positions, hidden]. */
  | "hiddenStates";

export interface CaptureOptions {
  /** Reductions to compute next to the tensors; only these come back. */
  readonly reductions?: readonly Reduction[];
  /** Token positions whose logits are returned (negative counts from the end). */
  readonly logitsAt?: readonly number[];
  /** Teacher-forced answer appended to the prompt; reductions focus on its positions. */
  readonly answer?: string;
  /** Additive bias on attention logits, for `attention_write` interventions. */
  readonly attentionBias?: AttentionBias;
  readonly signal?: AbortSignal;
}

/** Adds `value` to the pre-softmax attention scores on `positions` at `layers` × `heads`. */
export interface AttentionBias {
  readonly positions: "image" | readonly number[];
  readonly value: number;
  readonly layers?: readonly number[];
  readonly heads?: readonly number[];
}

/**
 * What one forward pass gave back: the tokens, and only the reductions that
 * were asked for, as small typed arrays (never a full attention tensor unless
 * `fullAttention` was requested for one case).
 */
export interface Trace {
  readonly tokens: readonly string[];
  readonly tokenIds: Int32Array;
  readonly imagePositions: Int32Array;
  /** Positions of the teacher-forced answer tokens, if an answer was given. */
  readonly answerPositions: Int32Array;
  /** Logits at the positions asked for: `[positions.length][vocab]`. */
  readonly logits?: { readonly positions: Int32Array; readonly values: Float32Array; readonly vocab: number };
  readonly reductions: Partial<Record<Reduction, TraceTensor>>;
}

/** A small dense tensor: row-major data with its shape and what each axis means. */
export interface TraceTensor {
  readonly data: Float32Array;
  readonly shape: readonly number[];
  readonly axes: readonly string[];
}

/** A loaded model. `generate` answers; `forward` reads internals. */
export interface Model {
  readonly spec: ModelSpec;
  readonly capabilities: ReadonlySet<Capability>;
  generate(input: ModelInput, options?: GenerateOptions): Promise<string>;
  forward(input: ModelInput, capture?: CaptureOptions): Promise<Trace>;
  dispose(): Promise<void>;
}
