/**
 * What the head adapter trains on, read through the model's own runtime: the
 * final hidden states (`finalHidden`, a `hidden_states` capability), run
 * through the model's language-model head file with the adapted MatMul's input
 * exposed as an extra output, so the features are exactly what that MatMul
 * multiplies (after whatever norm the head applies) and the base logits are the
 * head's own. The training pool is the diagnosis-only pool: a sealed case in it
 * is refused before anything is read.
 */
import type { FailureCase, ImagePixels, Model, ModelInput } from "../../core/index.ts";
import { DTYPE, readOnnxGraph } from "../../models/onnx-read.ts";
import { encodeGraph, encodeModel, encodeValueInfo } from "../../models/onnx-write.ts";
import type { Session, SessionFactory } from "../../models/session.ts";
import type { HeadData } from "./lora-head.ts";
import { readInitializer } from "./lora-merge.ts";

/** The head's adapted projection: the MatMul producing the logits, its weight initializer and its data input. */
export interface HeadProjection {
  /** The weight initializer's name ([dim, vocab]). */
  readonly weight: string;
  /** The tensor the MatMul multiplies by the weight (the features). */
  readonly input: string;
  readonly output: string;
  readonly dim: number;
  readonly vocab: number;
}

/**
 * The MatMul of a language-model head file whose output is the graph's logits (directly or through
 * an Add/Identity) and whose second input is a [dim, vocab] initializer. Throws naming the file's
 * outputs when there is none.
 *
 * @example headProjection(lmHeadBytes) // { weight: "onnx::MatMul_34", input: "/norm/Mul_1_output_0", dim: 64, vocab: 29, … }
 */
export function headProjection(bytes: Uint8Array): HeadProjection {
  const graph = readOnnxGraph(bytes);
  const logits = graph.outputs.find((o) => o === "logits") ?? graph.outputs[0];
  if (!logits) throw new Error("language-model head: the graph has no output");
  const producer = new Map(graph.nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  let node = producer.get(logits);
  for (let hops = 0; node && node.opType !== "MatMul" && hops < 4; hops++)
    node = ["Add", "Identity", "Cast"].includes(node.opType) ? producer.get(node.inputs[0]!) : undefined;
  const weight = node?.inputs[1];
  const dims = weight ? graph.initializers.get(weight)?.dims : undefined;
  if (!node || !weight || !dims || dims.length !== 2 || typeof dims[0] !== "number" || typeof dims[1] !== "number")
    throw new Error(
      `language-model head: no MatMul with a [dim, vocab] weight initializer produces '${logits}' (outputs: ${graph.outputs.join(", ")}); the L4 head adapter needs one`,
    );
  return { weight, input: node.inputs[0]!, output: node.outputs[0]!, dim: dims[0], vocab: dims[1] };
}

/** The head file with the projection's input added as a graph output (float32 [batch, seq, dim]). */
export function withFeatureOutput(bytes: Uint8Array, projection: HeadProjection): Uint8Array {
  const graph = readOnnxGraph(bytes);
  if (graph.outputs.includes(projection.input)) return bytes;
  const info = encodeValueInfo(projection.input, DTYPE.float);
  return encodeModel(graph, encodeGraph(graph, { addOutputs: [info] }));
}

/** Rows of the training set, each traced back to its case (a case gives one row per answer token). */
export interface HeadPool extends HeadData {
  readonly caseIds: readonly string[];
  readonly projection: HeadProjection;
}

export interface PoolOptions {
  /** The language-model head file (`onnx/lm_head.onnx`). */
  readonly headBytes: Uint8Array;
  readonly sessions: SessionFactory;
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  /** Ids of the sealed (and repair-split) cases: none may be in the pool. */
  readonly sealed: ReadonlySet<string>;
  readonly signal?: AbortSignal;
  readonly onCase?: (done: number, total: number) => void;
}

/** Thrown when a case the validation will judge is offered for training. */
export class SealedCaseRefused extends Error {
  override readonly name = "SealedCaseRefused";
}

/**
 * Refuses, before anything is read, a pool that holds a sealed case, a case without an expected answer, or a
 * model without hidden states (`needs` says what for): every L4 method trains on the diagnosis-only pool.
 *
 * @example refuseUnfitPool(model, explorationCases, sealedIds, "…") // throws SealedCaseRefused on a sealed id
 */
export function refuseUnfitPool(
  model: Model,
  cases: readonly FailureCase[],
  sealed: ReadonlySet<string>,
  needs: string,
): void {
  const leaked = cases.filter((c) => sealed.has(c.id)).map((c) => c.id);
  if (leaked.length)
    throw new SealedCaseRefused(
      `L4 training pool: ${leaked.length} sealed case(s) offered for training (${leaked.slice(0, 5).join(", ")}${leaked.length > 5 ? ", …" : ""}); the pool is the exploration split and probe-search cases only — a sealed case would be judged by the validation it trained on`,
    );
  if (!model.capabilities.has("hidden_states"))
    throw new Error(
      `L4: ${model.spec.key} gives no hidden_states (capabilities: ${[...model.capabilities].join(", ")}); ${needs}`,
    );
  const missing = cases.filter((c) => String(c.expected ?? "").trim() === "").map((c) => c.id);
  if (missing.length)
    throw new Error(
      `L4 training pool: case(s) ${missing.slice(0, 5).join(", ")} have no expected answer to train toward`,
    );
}

/**
 * The training rows of the diagnosis-only pool: for every case, the model's final hidden state at each
 * position that predicts a token of its expected answer (teacher-forced), mapped through the head to the
 * adapted MatMul's features and the unadapted logits. Refuses a model without `hidden_states`, a case
 * without an expected answer, and — before reading anything — any sealed case.
 *
 * @example
 * const pool = await headPool(model, explorationCases, { headBytes, sessions, images, sealed: new Set(sealedIds) });
 * pool.n // one row per expected answer token
 */
export async function headPool(model: Model, cases: readonly FailureCase[], o: PoolOptions): Promise<HeadPool> {
  refuseUnfitPool(model, cases, o.sealed, "it needs the final hidden states and the head file");
  const projection = headProjection(o.headBytes);
  const session: Session = await o.sessions(withFeatureOutput(o.headBytes, projection), {
    name: "lm_head (L4 features)",
  });
  const { dim, vocab } = projection;
  const xs: Float32Array[] = [];
  const zs: Float32Array[] = [];
  const ys: number[] = [];
  const ids: string[] = [];
  try {
    for (const [i, c] of cases.entries()) {
      if (o.signal?.aborted) throw new Error("training cancelled");
      const image = c.input.image !== undefined ? await o.images(c.input.image, c) : undefined;
      const input: ModelInput = { prompt: c.input.prompt, ...(image ? { image } : {}) };
      const t = await model.forward(input, { answer: String(c.expected).trim(), reductions: ["finalHidden"] });
      const hidden = t.reductions.finalHidden;
      if (!hidden) throw new Error(`L4 training pool: ${model.spec.key} returned no finalHidden for case '${c.id}'`);
      const rows = t.answerPositions.length;
      if (hidden.shape[0] !== rows || hidden.shape[1] !== hidden.data.length / Math.max(1, rows))
        throw new Error(
          `L4 training pool: finalHidden of case '${c.id}' has shape [${hidden.shape}] for ${rows} answer tokens`,
        );
      const D = hidden.data.length / rows;
      const out = await session.run({ hidden_states: { type: "float32", data: hidden.data, dims: [1, rows, D] } }, [
        projection.input,
        projection.output,
      ]);
      const x = out[projection.input]!.data as Float32Array;
      const z = out[projection.output]!.data as Float32Array;
      if (x.length !== rows * dim || z.length !== rows * vocab)
        throw new Error(`L4 training pool: the head gave ${x.length} features and ${z.length} logits for ${rows} rows`);
      xs.push(Float32Array.from(x));
      zs.push(Float32Array.from(z));
      for (const p of t.answerPositions) ys.push(t.tokenIds[p]!);
      for (let k = 0; k < rows; k++) ids.push(c.id);
      o.onCase?.(i + 1, cases.length);
    }
  } finally {
    await session.release();
  }
  const n = ys.length;
  if (n === 0) throw new Error("L4 training pool: no case gave an answer token to train on");
  const x = new Float32Array(n * dim);
  const z0 = new Float32Array(n * vocab);
  let at = 0;
  xs.forEach((block, i) => {
    x.set(block, at * dim);
    z0.set(zs[i]!, at * vocab);
    at += block.length / dim;
  });
  return { n, dim, vocab, x, z0, y: Int32Array.from(ys), caseIds: ids, projection };
}

/**
 * Which initializers of a model file hold the head's weight (the same [dim, vocab] values): the head file's
 * own, and the decoder's copy its `logits` use. Returns their names (empty when the file holds none).
 */
export function headWeightCopies(bytes: Uint8Array, reference: { dims: number[]; values: Float32Array }): string[] {
  const graph = readOnnxGraph(bytes);
  const names: string[] = [];
  for (const [name, info] of graph.initializers) {
    const dims = info.dims;
    if (!dims || dims.length !== 2 || dims[0] !== reference.dims[0] || dims[1] !== reference.dims[1]) continue;
    if (info.elemType !== undefined && info.elemType !== DTYPE.float) continue;
    const values = readInitializer(bytes, name).values;
    let same = true;
    for (let i = 0; i < values.length && same; i++) same = values[i] === reference.values[i];
    if (same) names.push(name);
  }
  return names;
}
