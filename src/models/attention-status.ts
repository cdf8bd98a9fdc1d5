/**
 * The attention status of one ONNX graph: how many attention-probability
 * tensors a forward returns, where each was found, which fused ops were met
 * and whether they were decomposed, and what to do when attention cannot be
 * read. Plain data (strings, numbers, arrays): it crosses a worker boundary
 * and prints as JSON unchanged.
 */
import type { FusedOpReport } from "./fused/decompose.ts";

/** One place the softmax of one attention tensor lies in the graph. */
export interface AttentionPlaceStatus {
  /** The graph scope in words: "main graph", "If 'optimum::if' then_branch". */
  readonly where: string;
  /** The Softmax node, and the tensor it writes (in the graph as it is run, after any rewrite). */
  readonly node: string;
  readonly tensor: string;
  /** "4-D" (`[batch, heads, q, k]`) or "3-D batched" (`[batch·heads, q, k]`, returned as `[batch, heads, q, k]`). */
  readonly layout: "4-D" | "3-D batched" | "unknown rank";
  /** What made this softmax, when not the export itself: "function __main__.Attention, inlined …", "decomposed GroupQueryAttention '…'". */
  readonly origin?: string;
}

/** One attention-probability tensor a forward returns. */
export interface AttentionSiteStatus {
  /** Its index = the `attentions.{layer}` output. */
  readonly layer: number;
  /** The graph output that returns it. */
  readonly output: string;
  /** Every place it is computed (a merged decoder computes each layer in both `If` branches). */
  readonly places: readonly AttentionPlaceStatus[];
}

/** How a graph's attention is read. */
export type AttentionSourceKind = "exported" | "tapped" | "decomposed" | "unreadable";

/** The attention status of one ONNX graph, decided from its protobuf before any session exists. */
export interface AttentionStatus {
  /** The graph file, relative to the model folder ("onnx/decoder_model_merged.onnx"). */
  readonly file: string;
  /**
   * "exported": the graph already outputs `attentions.{i}`; "tapped": its
   * softmaxes are added as outputs; "decomposed": fused ops were rewritten
   * first, then tapped; "unreadable": no attention tensor can be returned.
   */
  readonly source: AttentionSourceKind;
  /** How many attention-probability tensors one forward returns. */
  readonly found: number;
  /** How many layers the model's config declares (0 when it does not say). */
  readonly layers: number;
  /** How many attention tensors the config implies for this graph (layers, or 2 × layers for self + cross). */
  readonly expected: number;
  /** True when `found > 0`: the `attention` capability. */
  readonly readable: boolean;
  /** True when the attention-bias edit reaches every found softmax: the `attention_write` capability. */
  readonly writable: boolean;
  readonly sites: readonly AttentionSiteStatus[];
  /** Fused attention ops met (main graph, branches, functions), decomposed or not. */
  readonly fused: readonly FusedOpReport[];
  /** Local functions inlined to reach their softmaxes, with the number of calls. */
  readonly inlined: readonly { readonly function: string; readonly calls: number }[];
  /** Attention that is there but cannot be returned, with where and why. */
  readonly unreachable: readonly { readonly where: string; readonly reason: string }[];
  /** One line: why attention is not (or only partly) readable. Absent when every expected tensor is found. */
  readonly reason?: string;
  /** What to do about it. Absent when nothing needs doing. */
  readonly advice?: string;
}

/** Advice for each way attention can be hidden. */
export const ADVICE = {
  fused:
    "re-export the model without ONNX Runtime's attention fusion (e.g. optimum-cli export onnx without --optimize, or the unoptimized *.onnx file of the repository), or pick a dtype variant whose file is not fused",
  none: "re-export with eager attention (attn_implementation='eager'): scaled_dot_product_attention or a custom op leaves no Softmax to read",
  loop: "export the model unrolled: attention inside a Loop/Scan body runs once per iteration and cannot be a graph output",
  branches: "re-export so both branches of the If compute the same layers (Optimum's merged decoder does)",
  functions: "re-export with one opset for the model and its functions",
} as const;

/**
 * A one-line summary of a status, as the CLI and the page print it.
 *
 * @example
 * describeAttention(status) // → "2 of 2 layers (tapped: main graph)"
 */
export function describeAttention(status: AttentionStatus): string {
  if (!status.readable) return `not readable: ${status.reason ?? "no attention found"}`;
  const wheres = [...new Set(status.sites.flatMap((s) => s.places.map((p) => p.where)))];
  const of = status.expected ? `${status.found} of ${status.expected}` : `${status.found}`;
  const what = status.expected && status.expected !== status.layers ? "attention tensors" : "layers";
  return `${of} ${what} (${status.source}${wheres.length ? `: ${wheres.join("; ")}` : ""})${status.reason ? ` — ${status.reason}` : ""}`;
}
