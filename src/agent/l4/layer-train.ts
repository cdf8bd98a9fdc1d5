/**
 * Training the last layer's LoRA adapters: Adam on seeded minibatches of
 * cases, the gradient from `last-layer.ts` (closed form, no autograd) plus
 * λ·A and λ·B. A is drawn N(0, 1/in) from the seed and B = 0, so training
 * starts at the unmodified model; λ pulls each adapter back toward it unless
 * the pool consistently asks otherwise.
 */
import { seededRng } from "../../stats/rng.ts";
import {
  lastLayerLoss,
  projectionShape,
  type AdaptedProjection,
  type LastLayerWeights,
  type LayerAdapter,
  type PreparedCase,
} from "./last-layer.ts";
import { Adam, epochOrder, gaussian, shuffle, type TrainOptions } from "./lora-head.ts";

/** `trainHeadLora`'s options (batchSize counts cases here), plus the projections and the held-out cases. */
export interface LayerTrainOptions extends TrainOptions {
  /** The projections adapted (default q, k, v, o of the last layer). */
  readonly targets?: readonly AdaptedProjection[];
  /**
   * Cases held out of training (other scenes of the pool): their loss is measured every `progressEvery` steps
   * and the adapters of the step where it was lowest are kept (early stopping), since a pool this small is
   * memorized long before the last step.
   */
  readonly validation?: readonly PreparedCase[];
}

/**
 * The defaults: rank 4, α = 8 on q, k, v and o, 300 Adam steps of 16 cases at lr 0.005, λ = 0.01, seed 1, and a
 * fifth of the pool's clusters held out for early stopping.
 */
export const LAYER_TRAIN_DEFAULTS = {
  targets: ["q", "k", "v", "o"] as readonly AdaptedProjection[],
  rank: 4,
  alpha: 8,
  steps: 300,
  batchSize: 16,
  learningRate: 0.005,
  l2: 0.01,
  seed: 1,
  /** The share of the pool's clusters held out of training for early stopping (`heldOutClusters`). */
  validationShare: 0.2,
};

export type LayerTrainSettings = typeof LAYER_TRAIN_DEFAULTS;

export interface TrainedLayer {
  readonly adapters: readonly LayerAdapter[];
  /** The step whose adapters were kept (the last one without validation cases). */
  readonly keptStep: number;
  /** The validation loss before training and at the kept step (without validation cases: undefined). */
  readonly validation?: { readonly cases: number; readonly initialLoss: number; readonly keptLoss: number };
  /** Mean cross-entropy over the whole pool before and after. */
  readonly initialLoss: number;
  readonly finalLoss: number;
  readonly options: LayerTrainSettings;
}

/**
 * Fits LoRA adapters on the last layer's projections to the pool's answer tokens. Yields to the event loop every
 * `progressEvery` steps (a worker receives Cancel then); throws "training cancelled" when `signal` aborts.
 * Answers: which low-rank change of these projections makes the expected answers most likely on the pool?
 *
 * @example
 * const fit = await trainLayerLora(last.weights, pool.cases, { steps: 100, onStep: (s) => console.log(s.loss) });
 * fit.finalLoss < fit.initialLoss // on a learnable pool
 */
export async function trainLayerLora(
  w: LastLayerWeights,
  cases: readonly PreparedCase[],
  options: LayerTrainOptions = {},
): Promise<TrainedLayer> {
  const o: LayerTrainSettings = {
    ...LAYER_TRAIN_DEFAULTS,
    ...(Object.fromEntries(
      Object.entries(options).filter(([k, v]) => v !== undefined && k in LAYER_TRAIN_DEFAULTS),
    ) as Partial<LayerTrainSettings>),
  };
  for (const key of ["rank", "steps", "batchSize"] as const)
    if (!(Number.isInteger(o[key]) && o[key] >= 1))
      throw new RangeError(`trainLayerLora(): ${key} must be a positive integer, got ${o[key]}`);
  for (const key of ["alpha", "learningRate"] as const)
    if (!(o[key] > 0)) throw new RangeError(`trainLayerLora(): ${key} must be > 0, got ${o[key]}`);
  if (!(o.l2 >= 0)) throw new RangeError(`trainLayerLora(): l2 must be ≥ 0, got ${o.l2}`);
  if (!o.targets.length || new Set(o.targets).size !== o.targets.length)
    throw new RangeError(`trainLayerLora(): targets must name each projection once, got [${o.targets.join(", ")}]`);
  const n = cases.length;
  if (!n) throw new RangeError("trainLayerLora(): no cases to train on");
  const rng = seededRng("trainLayerLora", o.seed);
  const r = o.rank;
  const adapters: LayerAdapter[] = o.targets.map((target) => {
    const [rows, cols] = projectionShape(w, target);
    return {
      target,
      rank: r,
      a: Float32Array.from({ length: rows * r }, () => gaussian(rng) / Math.sqrt(rows)),
      b: new Float32Array(r * cols),
      scale: o.alpha / r,
    };
  });
  const initialLoss = lastLayerLoss(w, cases, adapters, false).loss;
  const params = adapters.flatMap((a) => [a.a, a.b]);
  const held = options.validation?.length ? options.validation : undefined;
  const heldLoss = () => lastLayerLoss(w, held!, adapters, false).loss;
  const initialHeld = held ? heldLoss() : Number.NaN;
  let best = { step: 0, loss: initialHeld, params: params.map((p) => Float32Array.from(p)) };
  const adam = new Adam(params, o.learningRate);
  const every = options.progressEvery ?? 10;
  const batch = Math.min(o.batchSize, n);
  const next = epochOrder(n, rng);
  for (let step = 1; step <= o.steps; step++) {
    if (options.signal?.aborted) throw new Error("training cancelled");
    const chosen = Array.from({ length: batch }, () => cases[next()]!);
    const { loss, grads } = lastLayerLoss(w, chosen, adapters);
    adam.step(grads.flatMap((g) => [g.a, g.b]).map((g, k) => g.map((v, i) => v + o.l2 * params[k]![i]!)));
    if (step % every === 0 || step === o.steps) {
      if (held) {
        const now = heldLoss();
        if (now < best.loss) best = { step, loss: now, params: params.map((p) => Float32Array.from(p)) };
      }
      options.onStep?.({ step, steps: o.steps, loss });
      // Let a worker's message loop run (Cancel arrives as a message).
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
  if (options.signal?.aborted) throw new Error("training cancelled");
  if (held) best.params.forEach((kept, k) => params[k]!.set(kept));
  return {
    adapters,
    keptStep: held ? best.step : o.steps,
    ...(held ? { validation: { cases: held.length, initialLoss: initialHeld, keptLoss: best.loss } } : {}),
    initialLoss,
    finalLoss: lastLayerLoss(w, cases, adapters, false).loss,
    options: o,
  };
}

/**
 * Which pool cases train and which are held out for early stopping: `share` of the distinct clusters (scenes),
 * drawn from `seed`, so no scene is on both sides. Fewer than 5 clusters: nothing is held out.
 *
 * @example heldOutClusters(["s1", "s1", "s2", "s3", "s4", "s5"], 0.2, 1) // { train: [0, 1, 2, 4, 5], held: [3] }
 */
export function heldOutClusters(
  clusters: readonly string[],
  share: number,
  seed: number,
): { train: number[]; held: number[] } {
  if (!(share >= 0 && share < 1)) throw new RangeError(`heldOutClusters(): share must be in [0, 1), got ${share}`);
  const distinct = [...new Set(clusters)];
  const k = distinct.length >= 5 ? Math.round(share * distinct.length) : 0;
  shuffle(distinct, seededRng("heldOutClusters", seed));
  const held = new Set(distinct.slice(0, k));
  const out = { train: [] as number[], held: [] as number[] };
  clusters.forEach((c, i) => (held.has(c) ? out.held : out.train).push(i));
  return out;
}
