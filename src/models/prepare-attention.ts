import { ADVICE, type AttentionStatus, type AttentionSiteStatus } from "./attention-status.ts";
import { discoverAttention, editAttention, type AttentionDiscovery } from "./attention-graph.ts";
import { decomposeFusedAttention, type FusedOpReport } from "./fused/decompose.ts";
import { inlineFunctions } from "./inline-functions.ts";
import { readOnnxGraph } from "./onnx-read.ts";

/** What to prepare a graph for. */
export interface PrepareOptions {
  /** The graph file, for the status (default "model.onnx"). */
  readonly file?: string;
  /** Heads per layer (batched 3-D attention is then returned as `[batch, heads, q, k]`). */
  readonly heads?: number;
  /** Layers the config declares, and the attention tensors it implies for this graph (default: layers). */
  readonly layers?: number;
  readonly expected?: number;
  /** Add the `attentions.{i}` outputs (default true). */
  readonly tap?: boolean;
  /** Add the `attention_bias.{i}` inputs (the attention-write edit). */
  readonly bias?: boolean;
}

/** A graph ready for a session, with its attention status. */
export interface PreparedAttention {
  /** The bytes to create the session from (the original bytes when nothing needed changing). */
  readonly bytes: Uint8Array;
  readonly status: AttentionStatus;
  /** `attentions.{i}` outputs, in layer order. */
  readonly attentionOutputs: readonly string[];
  /** `attention_bias.{i}` inputs, in layer order (when `bias` was asked). */
  readonly biasInputs: readonly string[];
}

const EXPORTED = /^attentions\.(\d+)$/;

function sitesOf(discovery: AttentionDiscovery, outputs: readonly string[]): AttentionSiteStatus[] {
  return discovery.softmaxes.map((s, i) => ({
    layer: s.layer,
    output: outputs[i] ?? `attentions.${s.layer}`,
    places: s.places.map((p) => ({
      where: p.where,
      node: p.node,
      tensor: p.probs,
      layout: p.rank === 3 ? "3-D batched" : p.rank === 4 ? "4-D" : "unknown rank",
      ...(p.origin ? { origin: p.origin } : {}),
    })),
  }));
}

/**
 * Makes an ONNX graph's attention readable and writable, reading only its
 * protobuf: local functions that hold attention are inlined, ONNX Runtime's
 * fused attention ops are decomposed into standard ops, then every attention
 * softmax (main graph, `If` branches, 3-D batched) is added as an
 * `attentions.{i}` output — and, with `bias`, gets an `attention_bias.{i}`
 * input. A graph that already exports `attentions.{i}` is left as it is.
 * The status says what was found, where, and — when attention cannot be
 * read — why and what to do, before any session is created.
 *
 * @example
 * const { bytes, status } = prepareAttention(decoderBytes, { file: "onnx/decoder_model_merged.onnx", heads: 4, layers: 2 });
 * status.found // → 2; status.sites[0].places.map((p) => p.where) → ["If 'optimum::if' then_branch", "… else_branch"]
 */
export function prepareAttention(bytes: Uint8Array, options: PrepareOptions = {}): PreparedAttention {
  const file = options.file ?? "model.onnx";
  const layers = options.layers ?? 0;
  const expected = options.expected ?? layers;
  const tap = options.tap ?? true;
  const original = readOnnxGraph(bytes);
  const exported = original.outputs.filter((o) => EXPORTED.test(o)).sort((a, b) => layerOf(a) - layerOf(b));
  let working = bytes;
  let inlined: AttentionStatus["inlined"] = [];
  let fused: FusedOpReport[] = [];
  const unreachable: { where: string; reason: string }[] = [];
  const origins = new Map<string, string>();
  // A graph that exports attention runs as it is; only the bias edit needs its softmaxes reachable.
  if (!exported.length || options.bias) {
    const flat = inlineFunctions(working);
    working = flat.bytes;
    inlined = flat.inlined;
    for (const s of flat.skipped)
      unreachable.push({ where: `function ${s.function}`, reason: `not inlined: ${s.reason}` });
    for (const [k, v] of flat.origins) origins.set(k, v);
    const plain = decomposeFusedAttention(working);
    working = plain.bytes;
    fused = [...plain.ops];
    for (const [k, v] of plain.origins) origins.set(k, v);
  }
  const discovery = discoverAttention(readOnnxGraph(working), origins);
  unreachable.push(...discovery.untappable);
  for (const op of fused)
    if (!op.decomposed)
      unreachable.push({ where: `${op.where} › ${op.op} '${op.node}'`, reason: op.reason ?? "not decomposed" });
  const found = exported.length || discovery.softmaxes.length;
  let out = working;
  let attentionOutputs: readonly string[] = exported;
  let biasInputs: readonly string[] = [];
  if (discovery.softmaxes.length && (options.bias || (tap && !exported.length))) {
    const edited = editAttention(working, {
      tap: tap || exported.length > 0,
      bias: !!options.bias,
      ...(options.heads ? { heads: options.heads } : {}),
      origins,
    });
    out = edited.bytes;
    attentionOutputs = edited.attentionOutputs;
    biasInputs = edited.biasInputs;
  } else if (!exported.length) out = bytes;
  const source: AttentionStatus["source"] = exported.length
    ? "exported"
    : !found
      ? "unreadable"
      : fused.some((f) => f.decomposed)
        ? "decomposed"
        : "tapped";
  const writable = discovery.softmaxes.length > 0 && discovery.softmaxes.length >= found;
  const { reason, advice } = explain({ found, expected, discovery, fused, unreachable, exported: exported.length });
  const status: AttentionStatus = {
    file,
    source,
    found,
    layers,
    expected,
    readable: found > 0,
    writable,
    sites: sitesOf(discovery, attentionOutputs),
    fused,
    inlined,
    unreachable,
    ...(reason ? { reason } : {}),
    ...(advice ? { advice } : {}),
  };
  return { bytes: out, status, attentionOutputs, biasInputs };
}

function layerOf(name: string): number {
  return Number(EXPORTED.exec(name)?.[1] ?? 0);
}

function explain(o: {
  found: number;
  expected: number;
  discovery: AttentionDiscovery;
  fused: readonly FusedOpReport[];
  unreachable: readonly { where: string; reason: string }[];
  exported: number;
}): { reason?: string; advice?: string } {
  const notDecomposed = o.fused.filter((f) => !f.decomposed);
  const reasons: string[] = [];
  const advice: string[] = [];
  if (notDecomposed.length) {
    reasons.push(
      ...notDecomposed.map((f) => `${f.op} '${f.node}' (${f.where}) was not decomposed: ${f.reason ?? "unsupported"}`),
    );
    advice.push(ADVICE.fused);
  }
  for (const u of o.unreachable) {
    if (notDecomposed.some((f) => u.where.endsWith(`${f.op} '${f.node}'`))) continue;
    reasons.push(`${u.where}: ${u.reason}`);
    advice.push(
      /Loop|Scan/.test(u.reason) ? ADVICE.loop : /branches/.test(u.reason) ? ADVICE.branches : ADVICE.functions,
    );
  }
  if (!o.found && !reasons.length) {
    reasons.push(o.discovery.unreadable ?? "no attention softmax was found");
    advice.push(ADVICE.none);
  }
  if (o.found && o.expected && o.found < o.expected && !reasons.length)
    reasons.push(`only ${o.found} of the ${o.expected} attention tensors the config implies were found`);
  if (o.found && o.expected && o.found > o.expected)
    reasons.push(
      `${o.found} attention softmaxes were found where the config implies ${o.expected}: layer indices may not match the model's layers`,
    );
  return {
    ...(reasons.length ? { reason: reasons.join("; ") } : {}),
    ...(advice.length ? { advice: [...new Set(advice)].join("; ") } : {}),
  };
}
