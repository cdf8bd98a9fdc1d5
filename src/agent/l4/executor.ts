/**
 * The L4 rung that runs: a low-rank adapter on the language-model head,
 * trained on the diagnosis-only pool, merged into a new model folder, and
 * offered to M5 as one more candidate — so it is validated exactly like every
 * rung (the same paired, cluster-aware test, e-value and yes-bias control, in
 * the same α budget) plus a no-free-lunch check on what it must not break.
 * Training happens the first time M5 asks the candidate for an answer (only
 * when no lower rung validated), so a run that stops lower never trains.
 *
 * What it can fix: a head adapter changes how the final hidden state is read
 * out (a bias toward "yes", a calibration of yes against no given what the
 * decoder already carries). What it cannot: information the decoder lost
 * before the head — when attention leaves the image (planted-vlm's dim scenes),
 * the final hidden state no longer says what is in the image, and no readout of
 * it can recover that; grounding needs adapters on the attention projections
 * (the recipe's grounding LoRA), which this executor does not train.
 */
import type { FailureCase, ImagePixels, Model } from "../../core/index.ts";
import type { SessionFactory } from "../../models/session.ts";
import type { Candidate } from "../repair.ts";
import { headPool, type HeadProjection } from "./head-features.ts";
import { mergeHeadFiles } from "./head-merge.ts";
import { HEAD_TRAIN_DEFAULTS, trainHeadLora, type TrainOptions, type TrainStep } from "./lora-head.ts";
import { noFreeLunch, NO_FREE_LUNCH_MARGIN, type NoFreeLunch } from "./no-free-lunch.ts";

/** The diagnosis-only pool offered to the executor: training cases, and every id the validation may judge. */
export interface L4Pool {
  readonly cases: readonly FailureCase[];
  readonly sealed: ReadonlySet<string>;
}

/** What the executor did, as M5 logs it beside the candidate's paired test. */
export interface L4Training {
  readonly method: string;
  readonly pool: { readonly cases: number; readonly rows: number; readonly source: string };
  readonly options: Required<Omit<TrainOptions, "onStep" | "signal" | "progressEvery">>;
  readonly initialLoss: number;
  readonly finalLoss: number;
  /** (step, minibatch loss) every `progressEvery` steps. */
  readonly curve: readonly (readonly [number, number])[];
  readonly projection: HeadProjection;
  /** The files whose initializers were rewritten. */
  readonly merged: readonly string[];
  /** Where the merged model folder is (a path, or a name in the page's store). */
  readonly weights: string;
  readonly ms: number;
  readonly limits: string;
}

export interface HeadAdapterOptions extends L4Pool {
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
  const t = { ...HEAD_TRAIN_DEFAULTS, ...(o.train ?? {}) };
  const signature = `lora:lm_head:r${t.rank}:a${t.alpha}:steps${t.steps}:seed${t.seed}`;
  const head = o.head ?? "onnx/lm_head.onnx";
  let ready: Promise<Model> | undefined;
  let record: L4Training | undefined;
  let merged: Model | undefined;
  let failed: string | undefined;
  const build = async (base: Model): Promise<Model> => {
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
    const curve: [number, number][] = [];
    const fit = await trainHeadLora(pool, {
      ...t,
      onStep: (s) => {
        curve.push([s.step, Number(s.loss.toPrecision(5))]);
        o.onStep?.(s);
      },
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const { files: out, changed } = mergeHeadFiles(files, head, pool.projection, fit.adapter);
    const loaded = await o.materialize(out, `${base.spec.key.replace(/^.*[\\/]/, "")}+${signature.replace(/:/g, "-")}`);
    merged = loaded.model;
    record = {
      method: `LoRA on the language-model head (${pool.projection.weight}, [${pool.projection.dim}, ${pool.projection.vocab}]), rank ${t.rank}, α ${t.alpha}: ${t.steps} Adam steps of ${t.batchSize} rows, lr ${t.learningRate}, λ ${t.l2}, seed ${t.seed}; cross-entropy on every expected answer token; closed-form gradient, no autograd`,
      pool: {
        cases: o.cases.length,
        rows: pool.n,
        source:
          "the diagnosis-only pool: the exploration split (with the probe-search cases it holds); every sealed case refused",
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
    return loaded.model;
  };
  const margin = o.margin ?? NO_FREE_LUNCH_MARGIN;
  return {
    tier: "L4",
    signature,
    name: `LoRA head adapter (rank ${t.rank})`,
    description: `fine-tunes a rank-${t.rank} LoRA on the language-model head on the ${o.cases.length} cases of the diagnosis-only pool (never a sealed case), merges it into the ONNX weights as a new model folder, and answers with that model; ${HEAD_ADAPTER_LIMITS}`,
    generate: async (base, input, options) => {
      ready ??= build(base).catch((error: unknown) => {
        failed = `L4 training failed: ${error instanceof Error ? error.message : String(error)}`;
        throw new Error(failed, { cause: error });
      });
      return (await ready).generate(input, options);
    },
    noFreeLunch: (cases, baseline, candidate): NoFreeLunch => noFreeLunch(cases, baseline, candidate, margin),
    // Logged beside the test: what training made, or why it failed (so a failure is not read as a bad repair).
    training: () => record ?? (failed ? { failed } : undefined),
    failure: () => failed,
    dispose: async () => {
      await merged?.dispose();
    },
  };
}
