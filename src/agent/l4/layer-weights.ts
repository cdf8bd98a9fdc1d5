/**
 * The last decoder layer's weights, read from a model folder's decoder file:
 * the projections found by the node names a PyTorch/optimum export gives them
 * (`…/layers.<i>/self_attn/q_proj/MatMul`, `…/mlp/gate_proj/MatMul`,
 * `…/input_layernorm/Mul_1`, `…/norm/Mul_1`, `…/lm_head/MatMul`), and the
 * shapes and constants from config.json. A decoder that is not laid out so is
 * refused here, naming what is missing; one that is but computes something
 * else is caught by `layer-pool.ts`, which compares this layer's logits with
 * the runtime's on every training case.
 */
import { readOnnxGraph } from "../../models/onnx-read.ts";
import type { AdaptedProjection, LastLayerWeights } from "./last-layer.ts";
import { readInitializer } from "./lora-merge.ts";

/** The weights, the decoder file they came from, and each adaptable projection's initializer name there. */
export interface LastLayer {
  readonly weights: LastLayerWeights;
  /** The decoder file's path in the folder. */
  readonly decoder: string;
  /** The layer's index (0-based); its input is hidden_states.<layer>. */
  readonly layer: number;
  readonly layers: number;
  readonly names: Readonly<Record<AdaptedProjection, string>>;
}

function textConfig(config: Record<string, unknown>): Record<string, unknown> {
  const text = config["text_config"];
  return typeof text === "object" && text !== null ? { ...config, ...(text as Record<string, unknown>) } : config;
}

function positive(c: Record<string, unknown>, key: string, fallback?: number): number {
  const v = c[key] ?? fallback;
  if (typeof v !== "number" || !(v > 0))
    throw new Error(`config.json: '${key}' must be a number > 0 for the L4 layer adapter, got ${String(v)}`);
  return v;
}

/**
 * The last layer of the decoder in `files` (path → bytes; config.json and a decoder whose outputs include
 * `logits` and `hidden_states.*`), with its weights read. Throws naming the file and the missing node.
 *
 * @example
 * const last = readLastLayer(readFolder("models/planted-vlm"));
 * last.layer // 1 (of 2); last.names.q // "onnx::MatMul_426"
 */
export function readLastLayer(files: ReadonlyMap<string, Uint8Array>): LastLayer {
  const configBytes = files.get("config.json");
  if (!configBytes) throw new Error("L4 layer adapter: the model folder has no config.json");
  const config = textConfig(JSON.parse(new TextDecoder().decode(configBytes)) as Record<string, unknown>);
  const candidates = [...files.keys()].filter((p) => p.endsWith(".onnx")).sort();
  let decoder: string | undefined;
  let graph: ReturnType<typeof readOnnxGraph> | undefined;
  for (const path of candidates) {
    const g = readOnnxGraph(files.get(path)!);
    if (g.outputs.includes("logits") && g.outputs.some((o) => /^hidden_states\.\d+$/.test(o))) {
      decoder = path;
      graph = g;
      break;
    }
  }
  if (!decoder || !graph)
    throw new Error(
      `L4 layer adapter: no decoder file with 'logits' and 'hidden_states.*' outputs among ${candidates.join(", ") || "(no .onnx files)"}`,
    );
  const bytes = files.get(decoder)!;
  let layers = 0;
  for (const n of graph.nodes) {
    const m = /layers\.(\d+)\/self_attn\/q_proj\/MatMul$/.exec(n.name ?? "");
    if (m) layers = Math.max(layers, Number(m[1]) + 1);
  }
  if (!layers) throw new Error(`L4 layer adapter: ${decoder} has no node named '…/layers.<i>/self_attn/q_proj/MatMul'`);
  const layer = layers - 1;
  // A weight of the last layer (`inLayer`), or of the model outside every layer (the final norm, the head).
  const weightOf = (suffix: string, inLayer = true): string => {
    const within = inLayer ? `layers.${layer}/` : undefined;
    const node = graph.nodes.find((n) => {
      const name = n.name ?? "";
      return name.endsWith(suffix) && (within ? name.includes(within) : !/layers\.\d+\//.test(name));
    });
    const name = node?.inputs[1];
    if (!node || !name || !graph.initializers.has(name))
      throw new Error(
        `L4 layer adapter: ${decoder} has no node '…${within ?? ""}${suffix}' with a weight initializer (the layer is read by its export's node names)`,
      );
    return name;
  };
  const names: Record<AdaptedProjection, string> = {
    q: weightOf("self_attn/q_proj/MatMul"),
    k: weightOf("self_attn/k_proj/MatMul"),
    v: weightOf("self_attn/v_proj/MatMul"),
    o: weightOf("self_attn/o_proj/MatMul"),
    head: weightOf("lm_head/MatMul", false),
  };
  const read = (name: string, dims: readonly number[]): Float32Array => {
    const t = readInitializer(bytes, name);
    if (t.dims.length !== dims.length || t.dims.some((d, i) => d !== dims[i]))
      throw new Error(`L4 layer adapter: ${decoder}: '${name}' has dims [${t.dims}], expected [${dims}]`);
    return t.values;
  };
  const dim = positive(config, "hidden_size");
  const heads = positive(config, "num_attention_heads");
  if (config["num_key_value_heads"] !== undefined && config["num_key_value_heads"] !== heads)
    throw new Error(
      `L4 layer adapter: config.json has ${String(config["num_key_value_heads"])} key/value heads for ${heads} query heads; grouped-query attention is not implemented here`,
    );
  const headDim = positive(config, "head_dim", dim / heads);
  const inner = positive(config, "intermediate_size");
  const vocab = positive(config, "vocab_size");
  const weights: LastLayerWeights = {
    dim,
    heads,
    headDim,
    inner,
    vocab,
    eps: positive(config, "rms_norm_eps"),
    ropeTheta: positive(config, "rope_theta", 10000),
    q: read(names.q, [dim, dim]),
    k: read(names.k, [dim, dim]),
    v: read(names.v, [dim, dim]),
    o: read(names.o, [dim, dim]),
    inputNorm: read(weightOf("input_layernorm/Mul_1"), [dim]),
    postNorm: read(weightOf("post_attention_layernorm/Mul_1"), [dim]),
    finalNorm: read(weightOf("norm/Mul_1", false), [dim]),
    gate: read(weightOf("mlp/gate_proj/MatMul"), [dim, inner]),
    up: read(weightOf("mlp/up_proj/MatMul"), [dim, inner]),
    down: read(weightOf("mlp/down_proj/MatMul"), [inner, dim]),
    head: read(names.head, [dim, vocab]),
  };
  return { weights, decoder, layer, layers, names };
}
