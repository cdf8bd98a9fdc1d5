/**
 * The L4 rung that runs: low-rank adapters trained on the diagnosis-only pool,
 * merged into a new model folder, and offered to M5 as one more candidate — so
 * it is validated exactly like every rung (the same paired, cluster-aware test,
 * e-value and yes-bias control, in the same α budget) plus a no-free-lunch
 * check on what it must not break. Training happens the first time M5 asks the
 * candidate for an answer (only when no lower rung validated), so a run that
 * stops lower never trains.
 *
 * Two methods. `layer` (the default): LoRA on the last decoder layer's
 * attention projections (q, k, v, o), trained through that layer written out
 * in `last-layer.ts` — it changes where the answer's query attends and what it
 * reads, so it reaches planted-vlm's dim scenes, where attention left the image
 * for `<s>`. `head`: LoRA on the language-model head, a readout of the final
 * hidden state (yes/no calibration, answer bias) that cannot restore what the
 * decoder did not carry to the head. */
import type { FailureCase, ImagePixels, Model } from "../../core/index.ts";
import type { SessionFactory } from "../../models/session.ts";
import type { Candidate } from "../repair.ts";
import { headPool, type HeadProjection } from "./head-features.ts";
import { mergeHeadFiles } from "./head-merge.ts";
import { HEAD_TRAIN_DEFAULTS, trainHeadLora, type TrainOptions, type TrainStep } from "./lora-head.ts";
import { noFreeLunch, NO_FREE_LUNCH_MARGIN, type NoFreeLunch } from "./no-free-lunch.ts";
import { mergeLayerFiles } from "./layer-merge.ts";
import { layerPool } from "./layer-pool.ts";
import { heldOutClusters, LAYER_TRAIN_DEFAULTS, trainLayerLora, type LayerTrainSettings } from "./layer-train.ts";
import { readLastLayer } from "./layer-weights.ts";

/** The diagnosis-only pool offered to the executor: training cases, and every id the validation may judge. */
export interface L4Pool {
  readonly cases: readonly FailureCase[];
  readonly sealed: ReadonlySet<string>;
}

/** What the executor did, as M5 logs it beside the candidate's paired test. */
export interface L4Training {
  readonly method: string;
  readonly pool: {
    readonly cases: number;
    readonly rows: number;
    readonly source: string;
    /** Layer adapter: pool cases held out of training for early stopping, and the step whose adapters were kept. */
    readonly heldOut?: number;
    readonly keptStep?: number;
  };
  readonly options: Required<Omit<TrainOptions, "onStep" | "signal" | "progressEvery">> | LayerTrainSettings;
  readonly initialLoss: number;
  readonly finalLoss: number;
  /** (step, minibatch loss) every `progressEvery` steps. */
  readonly curve: readonly (readonly [number, number])[];
  /** The head adapter's projection, or the layer adapter's: the decoder file, layer and initializer per projection. */
  readonly projection:
    | HeadProjection
    | { readonly decoder: string; readonly layer: number; readonly names: Readonly<Record<string, string>> };
  /** The layer adapter's largest |log p| difference from the runtime over the pool (its forward's check). */
  readonly checkError?: number;
  /** The files whose initializers were rewritten. */
  readonly merged: readonly string[];
  /** Where the merged model folder is (a path, or a name in the page's store). */
  readonly weights: string;
  readonly ms: number;
  readonly limits: string;
}

/**
 * What L4 trains: `layer` (default), LoRA on the last decoder layer's attention projections (q, k, v, o) —
 * it can move where the answer's query attends, so it reaches failures where attention left the image; `head`,
 * LoRA on the language-model head only — a readout of the final hidden state.
 */
export type L4Method = "layer" | "head";

export interface HeadAdapterOptions extends L4Pool {
  /** What L4 trains (default `layer`). */
  readonly method?: L4Method;
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  readonly sessions: SessionFactory;
  /** The base model folder's files, by path inside it (read when training starts). */
  readonly files: () => Promise<ReadonlyMap<string, Uint8Array>>;
  /** The head file's path in the folder (default `onnx/lm_head.onnx`). */
  readonly head?: string;
  /** Writes the merged folder and loads it with the platform's backend. */
  readonly materialize: (
    files: ReadonlyMap<string, Uint8Array>,
    name: string,
  ) => Promise<{ readonly model: Model; readonly location: string }>;
  /** Training settings; rank, alpha, steps, learningRate, l2, seed and batchSize apply to both methods. */
  readonly train?: Omit<TrainOptions, "onStep" | "signal">;
  readonly onStep?: (step: TrainStep) => void;
  /** Progress while the pool's features are read (one forward per case). */
  readonly onCase?: (done: number, total: number) => void;
  readonly signal?: AbortSignal;
  /** No-free-lunch margin (default 2 accuracy points). */
  readonly margin?: number;
}

/** Above this many parameters (12·L·D² + V·D from the spec) L4 only writes the recipe, in the CLI and the page. */
export const TRAIN_HERE_MAX_PARAMETERS = 100e6;

export const LAYER_ADAPTER_LIMITS =
  "LoRA on the last decoder layer's attention projections only (q, k, v, o): it can move where the answer's query attends and what it reads there, with every earlier layer as it was — information that no position carries into the last layer (an image the vision encoder never saw) stays beyond it";

export const HEAD_ADAPTER_LIMITS =
  "a LoRA on the language-model head only: it changes how the final hidden state is read out (yes/no calibration, answer bias), not what the decoder extracted from the image; failures whose hidden state no longer carries the image (attention that left the image before the head) are beyond it — those need adapters on the attention projections (the recipe's grounding LoRA)";

/** The L4 candidate plus what its owner needs after M5: the training record and the merged model to release. */
export interface HeadAdapterCandidate extends Omit<Candidate, "training"> {
  /** What M5 logs beside the test: the training record, or `{ failed }` with the reason. */
  readonly training: () => L4Training | { readonly failed: string } | undefined;
  /** Why training or the merge failed (every answer of the candidate then fails with this message), if it did. */
  failure(): string | undefined;
  /** Releases the merged model's sessions. */
  dispose(): Promise<void>;
}

/**
 * The L4 head-adapter candidate over `o.cases` (refusing any sealed case when training starts). Its
 * signature names the method and hyperparameters, so a resumed M5 reads its stored run back.
 *
 * @example
 * const l4 = headAdapterCandidate({ cases: explore, sealed, images, sessions, files, materialize });
 * l4.signature // "lora:lm_head:r4:a8:steps300:seed1"
 */
export function headAdapterCandidate(o: HeadAdapterOptions): HeadAdapterCandidate {
  const method = o.method ?? "layer";
  if (method === "layer") return layerCandidate(o);
  const t = { ...HEAD_TRAIN_DEFAULTS, ...(o.train ?? {}) };
  const signature = `lora:lm_head:r${t.rank}:a${t.alpha}:steps${t.steps}:seed${t.seed}`;
  const head = o.head ?? "onnx/lm_head.onnx";
  const build = async (base: Model): Promise<Built> => {
    const started = Date.now();
    const files = await o.files();
    const headBytes = files.get(head);
    if (!headBytes) throw new Error(`L4: the model folder has no '${head}' (the head adapter needs the head file)`);
    const pool = await headPool(base, o.cases, {
      headBytes,
      sessions: o.sessions,
      images: o.images,
      sealed: o.sealed,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onCase ? { onCase: o.onCase } : {}),
    });
    const { curve, onStep } = lossCurve(o.onStep);
    const fit = await trainHeadLora(pool, {
      ...t,
      onStep,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const { files: out, changed } = mergeHeadFiles(files, head, pool.projection, fit.adapter);
    const loaded = await o.materialize(out, mergedName(base, signature));
    const record: L4Training = {
      method: `LoRA on the language-model head (${pool.projection.weight}, [${pool.projection.dim}, ${pool.projection.vocab}]), rank ${t.rank}, α ${t.alpha}: ${t.steps} Adam steps of ${t.batchSize} rows, lr ${t.learningRate}, λ ${t.l2}, seed ${t.seed}; cross-entropy on every expected answer token; closed-form gradient, no autograd`,
      pool: {
        cases: o.cases.length,
        rows: pool.n,
        source: POOL_SOURCE,
      },
      options: fit.options,
      initialLoss: fit.initialLoss,
      finalLoss: fit.finalLoss,
      curve,
      projection: pool.projection,
      merged: changed,
      weights: loaded.location,
      ms: Date.now() - started,
      limits: HEAD_ADAPTER_LIMITS,
    };
    return { model: loaded.model, record };
  };
  return trainedCandidate(
    {
      signature,
      name: `LoRA head adapter (rank ${t.rank})`,
      description: `fine-tunes a rank-${t.rank} LoRA on the language-model head on the ${o.cases.length} cases of the diagnosis-only pool (never a sealed case), merges it into the ONNX weights as a new model folder, and answers with that model; ${HEAD_ADAPTER_LIMITS}`,
      margin: o.margin ?? NO_FREE_LUNCH_MARGIN,
    },
    build,
  );
}

/** Where both methods' pools come from, as their training records say. */
const POOL_SOURCE =
  "the diagnosis-only pool: the exploration split (with the probe-search cases it holds); every sealed case refused";

/** The (step, loss) curve a training record keeps, filled by the step callback that also passes each step on. */
function lossCurve(onStep: ((step: TrainStep) => void) | undefined): {
  curve: [number, number][];
  onStep: (step: TrainStep) => void;
} {
  const curve: [number, number][] = [];
  return {
    curve,
    onStep: (s) => {
      curve.push([s.step, Number(s.loss.toPrecision(5))]);
      onStep?.(s);
    },
  };
}

/** What a build made: the merged model, loaded, and its training record. */
interface Built {
  readonly model: Model;
  readonly record: L4Training;
}

/** The merged folder's name: the base model's key (its last path part) + the signature. */
function mergedName(base: Model, signature: string): string {
  return `${base.spec.key.replace(/^.*[\\/]/, "")}+${signature.replace(/:/g, "-")}`;
}

/**
 * An L4 candidate around `build`, which trains and merges on the first answer M5 asks for (once); every answer
 * then comes from the merged model, or fails with the reason training failed.
 */
function trainedCandidate(
  meta: { readonly signature: string; readonly name: string; readonly description: string; readonly margin: number },
  build: (base: Model) => Promise<Built>,
): HeadAdapterCandidate {
  let ready: Promise<Built> | undefined;
  let failed: string | undefined;
  let built: Built | undefined;
  return {
    tier: "L4",
    signature: meta.signature,
    name: meta.name,
    description: meta.description,
    generate: async (base, input, options) => {
      ready ??= build(base).then(
        (b) => (built = b),
        (error: unknown) => {
          failed = `L4 training failed: ${error instanceof Error ? error.message : String(error)}`;
          throw new Error(failed, { cause: error });
        },
      );
      return (await ready).model.generate(input, options);
    },
    noFreeLunch: (cases, baseline, tuned): NoFreeLunch => noFreeLunch(cases, baseline, tuned, meta.margin),
    // Logged beside the test: what training made, or why it failed (so a failure is not read as a bad repair).
    training: () => built?.record ?? (failed ? { failed } : undefined),
    failure: () => failed,
    dispose: async () => {
      await built?.model.dispose();
    },
  };
}

/** The settings `o.train` gives the layer adapter (the head's defaults do not carry over). */
function layerSettings(o: HeadAdapterOptions): LayerTrainSettings {
  const given = Object.fromEntries(Object.entries(o.train ?? {}).filter(([, v]) => v !== undefined));
  return { ...LAYER_TRAIN_DEFAULTS, ...given } as LayerTrainSettings;
}

/**
 * The L4 layer-adapter candidate (`method: "layer"`): the pool's last-layer inputs read through the runtime and
 * checked against `last-layer.ts`, LoRA on that layer's q, k, v, o trained in closed form, merged into every copy
 * of those weights. Signature `lora:layer<i>.qkvo:r<rank>:a<α>:steps<n>:seed<s>`.
 */
function layerCandidate(o: HeadAdapterOptions): HeadAdapterCandidate {
  const t = layerSettings(o);
  const which = t.targets.join("");
  const signature = `lora:last-layer.${which}:r${t.rank}:a${t.alpha}:steps${t.steps}:seed${t.seed}`;
  const build = async (base: Model): Promise<Built> => {
    const started = Date.now();
    const files = await o.files();
    const last = readLastLayer(files);
    const pool = await layerPool(base, o.cases, last, {
      images: o.images,
      sealed: o.sealed,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onCase ? { onCase: o.onCase } : {}),
    });
    const { curve, onStep } = lossCurve(o.onStep);
    // Early stopping on pool scenes held out of training: never a sealed case, and no scene on both sides.
    const split = heldOutClusters(
      o.cases.map((c) => String(c.cluster ?? c.id)),
      t.validationShare,
      t.seed,
    );
    const fit = await trainLayerLora(
      last.weights,
      split.train.map((i) => pool.cases[i]!),
      {
        ...t,
        validation: split.held.map((i) => pool.cases[i]!),
        onStep,
        ...(o.signal ? { signal: o.signal } : {}),
      },
    );
    const { files: out, changed } = mergeLayerFiles(files, last, fit.adapters);
    const loaded = await o.materialize(out, mergedName(base, signature));
    const record: L4Training = {
      method: `LoRA on decoder layer ${last.layer + 1} of ${last.layers}'s ${t.targets.join(", ")} projections (${last.decoder}), rank ${t.rank}, α ${t.alpha}: up to ${t.steps} Adam steps of ${t.batchSize} cases, lr ${t.learningRate}, λ ${t.l2}, seed ${t.seed}; ${fit.validation ? `early stopping on the ${fit.validation.cases} cases of the pool's held-out scenes (loss ${fit.validation.initialLoss.toFixed(3)} → ${fit.validation.keptLoss.toFixed(3)}, kept step ${fit.keptStep})` : "no early stopping (under 5 scenes)"}; cross-entropy on every expected answer token; the layer's input read once per case, its forward and closed-form backward in last-layer.ts (checked against the runtime on every pool case: max |Δ log p| ${pool.maxError.toExponential(1)}), no autograd`,
      pool: {
        cases: o.cases.length,
        rows: pool.rows,
        ...(fit.validation ? { heldOut: fit.validation.cases, keptStep: fit.keptStep } : {}),
        source: POOL_SOURCE,
      },
      options: fit.options,
      initialLoss: fit.initialLoss,
      finalLoss: fit.finalLoss,
      curve,
      projection: { decoder: last.decoder, layer: last.layer, names: last.names },
      checkError: pool.maxError,
      merged: changed,
      weights: loaded.location,
      ms: Date.now() - started,
      limits: LAYER_ADAPTER_LIMITS,
    };
    return { model: loaded.model, record };
  };
  return trainedCandidate(
    {
      signature,
      name: `LoRA attention adapter (last layer, ${which}, rank ${t.rank})`,
      description: `fine-tunes rank-${t.rank} LoRA adapters on the last decoder layer's ${t.targets.join(", ")} projections on the ${o.cases.length} cases of the diagnosis-only pool (never a sealed case), merges them into the ONNX weights as a new model folder, and answers with that model; ${LAYER_ADAPTER_LIMITS}`,
      margin: o.margin ?? NO_FREE_LUNCH_MARGIN,
    },
    build,
  );
}
