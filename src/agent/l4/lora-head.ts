/**
 * The L4 executor's training step, without an autograd: a low-rank adapter on
 * one linear layer whose output is the logits (the language-model head), with
 * softmax cross-entropy on the expected tokens. For features x [N, D], the
 * head's unadapted logits z₀ [N, V] and adapter A [D, r], B [r, V] at scale s:
 *
 *   z = z₀ + s·(x·A)·B,   loss = (1/N)·Σᵢ −log softmax(zᵢ)[yᵢ] + (λ/2)(‖A‖² + ‖B‖²)
 *
 * and, with G = (softmax(z) − onehot(y)) / N and U = x·A,
 *
 *   ∂loss/∂B = s·Uᵀ·G + λB,   ∂loss/∂A = s·xᵀ·(G·Bᵀ) + λA.
 *
 * Closed form because the head is the last layer: nothing below it is trained,
 * so the features are computed once and the whole fit is matrix products.
 */
import { drawIndex, rejectBelow, seededRng } from "../../stats/rng.ts";

/** What the head is trained on: features, the unadapted logits, and the target token per row. */
export interface HeadData {
  /** Rows. */
  readonly n: number;
  /** Feature width (the head's input). */
  readonly dim: number;
  /** Logit width (the vocabulary). */
  readonly vocab: number;
  /** [n, dim], row-major: the input of the adapted MatMul. */
  readonly x: Float32Array;
  /** [n, vocab]: the head's logits without the adapter. */
  readonly z0: Float32Array;
  /** [n]: the token id each row should predict. */
  readonly y: Int32Array;
}

/** A head adapter's factors (row-major) and scale; `lora-merge.ts` writes W + s·A·B. */
export interface HeadAdapter {
  readonly rank: number;
  /** [dim, rank]. */
  readonly a: Float32Array;
  /** [rank, vocab]. */
  readonly b: Float32Array;
  readonly scale: number;
}

function checkData(fn: string, d: HeadData): void {
  const { n, dim, vocab } = d;
  if (![n, dim, vocab].every((v) => Number.isInteger(v) && v > 0))
    throw new RangeError(`${fn}(): n, dim and vocab must be positive integers, got ${n}, ${dim}, ${vocab}`);
  if (d.x.length !== n * dim) throw new RangeError(`${fn}(): x must hold n·dim = ${n * dim} values, got ${d.x.length}`);
  if (d.z0.length !== n * vocab)
    throw new RangeError(`${fn}(): z0 must hold n·vocab = ${n * vocab} values, got ${d.z0.length}`);
  if (d.y.length !== n) throw new RangeError(`${fn}(): y must hold n = ${n} targets, got ${d.y.length}`);
  d.y.forEach((t, i) => {
    if (!(t >= 0 && t < vocab)) throw new RangeError(`${fn}(): target ${i} is token ${t}, outside 0…${vocab - 1}`);
  });
}

/** The adapted logits z₀ + s·(x·A)·B for every row of `data` ([n, vocab]). */
export function adaptedLogits(data: HeadData, adapter: HeadAdapter): Float32Array {
  const { n, dim, vocab } = data;
  const r = adapter.rank;
  const z = Float32Array.from(data.z0);
  const u = new Float64Array(r);
  for (let i = 0; i < n; i++) {
    u.fill(0);
    for (let d = 0; d < dim; d++) {
      const xd = data.x[i * dim + d]!;
      for (let k = 0; k < r; k++) u[k]! += xd * adapter.a[d * r + k]!;
    }
    for (let k = 0; k < r; k++) {
      const uk = u[k]! * adapter.scale;
      for (let j = 0; j < vocab; j++) z[i * vocab + j]! += uk * adapter.b[k * vocab + j]!;
    }
  }
  return z;
}

/**
 * The loss on the rows `rows` (all when omitted) and its gradient in A and B.
 * Answers: how wrong is the adapted head on these rows, and which way should A and B move?
 *
 * @example
 * const { loss, gradB } = headLossAndGradient(data, { rank: 1, a, b: new Float32Array(vocab), scale: 1 });
 * // B = 0: loss is the unadapted head's cross-entropy; gradB = s·(x·A)ᵀ·(softmax(z₀) − onehot(y))/N
 */
export function headLossAndGradient(
  data: HeadData,
  adapter: HeadAdapter,
  options: { readonly rows?: ArrayLike<number>; readonly l2?: number } = {},
): { loss: number; gradA: Float32Array; gradB: Float32Array } {
  const { dim, vocab } = data;
  const r = adapter.rank;
  if (adapter.a.length !== dim * r || adapter.b.length !== r * vocab)
    throw new RangeError(
      `headLossAndGradient(): A must be [${dim}, ${r}] and B [${r}, ${vocab}], got ${adapter.a.length} and ${adapter.b.length} values`,
    );
  const rows = options.rows ?? Array.from({ length: data.n }, (_, i) => i);
  const m = rows.length;
  const l2 = options.l2 ?? 0;
  const s = adapter.scale;
  const gA = new Float64Array(dim * r);
  const gB = new Float64Array(r * vocab);
  const u = new Float64Array(r);
  const z = new Float64Array(vocab);
  const g = new Float64Array(vocab);
  const gb = new Float64Array(r);
  let loss = 0;
  for (let t = 0; t < m; t++) {
    const i = rows[t]!;
    u.fill(0);
    for (let d = 0; d < dim; d++) {
      const xd = data.x[i * dim + d]!;
      for (let k = 0; k < r; k++) u[k]! += xd * adapter.a[d * r + k]!;
    }
    let max = -Infinity;
    for (let j = 0; j < vocab; j++) {
      let v = data.z0[i * vocab + j]!;
      for (let k = 0; k < r; k++) v += s * u[k]! * adapter.b[k * vocab + j]!;
      z[j] = v;
      if (v > max) max = v;
    }
    let sum = 0;
    for (let j = 0; j < vocab; j++) sum += Math.exp(z[j]! - max);
    const logZ = max + Math.log(sum);
    const y = data.y[i]!;
    loss += logZ - z[y]!;
    for (let j = 0; j < vocab; j++) g[j] = (Math.exp(z[j]! - logZ) - (j === y ? 1 : 0)) / m;
    // ∂/∂B += s·uᵀ·g;  ∂/∂A += s·xᵀ·(g·Bᵀ)
    gb.fill(0);
    for (let k = 0; k < r; k++)
      for (let j = 0; j < vocab; j++) {
        gB[k * vocab + j]! += s * u[k]! * g[j]!;
        gb[k]! += g[j]! * adapter.b[k * vocab + j]!;
      }
    for (let d = 0; d < dim; d++) {
      const xd = data.x[i * dim + d]!;
      for (let k = 0; k < r; k++) gA[d * r + k]! += s * xd * gb[k]!;
    }
  }
  loss /= Math.max(1, m);
  let norm = 0;
  for (const v of adapter.a) norm += v * v;
  for (const v of adapter.b) norm += v * v;
  loss += (l2 / 2) * norm;
  const gradA = Float32Array.from(gA, (v, i) => v + l2 * adapter.a[i]!);
  const gradB = Float32Array.from(gB, (v, i) => v + l2 * adapter.b[i]!);
  return { loss, gradA, gradB };
}

/** One progress event of a training run. */
export interface TrainStep {
  readonly step: number;
  readonly steps: number;
  /** The minibatch loss at this step (before the update). */
  readonly loss: number;
}

export interface TrainOptions {
  readonly rank?: number;
  /** LoRA's α (the scale is α / rank). */
  readonly alpha?: number;
  readonly steps?: number;
  readonly batchSize?: number;
  readonly learningRate?: number;
  readonly l2?: number;
  readonly seed?: number;
  /** Called every `progressEvery` steps and at the last one. */
  readonly onStep?: (step: TrainStep) => void;
  readonly progressEvery?: number;
  readonly signal?: AbortSignal;
}

/** A finished fit: the adapter, the options it was trained with, and the loss curve (full-data loss before and after). */
export interface TrainedHead {
  readonly adapter: HeadAdapter;
  readonly initialLoss: number;
  readonly finalLoss: number;
  readonly steps: number;
  readonly options: Required<Omit<TrainOptions, "onStep" | "signal" | "progressEvery">>;
}

/**
 * The defaults: rank 4, α = 8, 300 Adam steps of 32 rows at lr 0.01, λ = 0.05, seed 1. λ keeps the adapter near
 * the unmodified head unless the pool consistently asks otherwise (on planted-vlm's demo cases λ = 1e-3 fixed more
 * sealed cases but broke more too).
 */
export const HEAD_TRAIN_DEFAULTS = {
  rank: 4,
  alpha: 8,
  steps: 300,
  batchSize: 32,
  learningRate: 0.01,
  l2: 0.05,
  seed: 1,
} as const;

/** A standard normal draw from `rng` (Box–Muller), for adapter initialisation. */
export function gaussian(rng: ReturnType<typeof seededRng>): number {
  const u = ((rng.next() >>> 0) + 0.5) / 4294967296;
  const v = ((rng.next() >>> 0) + 0.5) / 4294967296;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Shuffles `items` in place with `rng` (Fisher–Yates, unbiased draws). */
export function shuffle(items: { length: number; [i: number]: unknown }, rng: ReturnType<typeof seededRng>): void {
  const n = items.length;
  const threshold = rejectBelow(n);
  for (let i = n - 1; i > 0; i--) {
    let j = drawIndex(rng, n, threshold);
    while (j > i) j = drawIndex(rng, n, threshold);
    [items[i], items[j]] = [items[j], items[i]];
  }
}

/** Indices 0…n−1 without end: a fresh seeded permutation each epoch (the minibatch order). */
export function epochOrder(n: number, rng: ReturnType<typeof seededRng>): () => number {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  let cursor = n;
  return () => {
    if (cursor >= n) {
      shuffle(order, rng);
      cursor = 0;
    }
    return order[cursor++]!;
  };
}

/** Adam (β₁ 0.9, β₂ 0.999, ε 10⁻⁸) on `params`, updated in place by `step(grads)`, one gradient per parameter. */
export class Adam {
  readonly #m: Float64Array[];
  readonly #v: Float64Array[];
  #t = 0;
  constructor(
    private readonly params: readonly Float32Array[],
    private readonly learningRate: number,
  ) {
    this.#m = params.map((p) => new Float64Array(p.length));
    this.#v = params.map((p) => new Float64Array(p.length));
  }

  step(grads: readonly ArrayLike<number>[]): void {
    const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
    this.#t++;
    const c1 = 1 - beta1 ** this.#t;
    const c2 = 1 - beta2 ** this.#t;
    this.params.forEach((w, p) => {
      const grad = grads[p]!;
      const mm = this.#m[p]!;
      const vv = this.#v[p]!;
      for (let i = 0; i < w.length; i++) {
        mm[i] = beta1 * mm[i]! + (1 - beta1) * grad[i]!;
        vv[i] = beta2 * vv[i]! + (1 - beta2) * grad[i]! * grad[i]!;
        w[i]! -= (this.learningRate * (mm[i]! / c1)) / (Math.sqrt(vv[i]! / c2) + eps);
      }
    });
  }
}

/**
 * Fits a head adapter by Adam on seeded minibatches (A drawn N(0, 1/dim) from the seed, B = 0,
 * so training starts at the unmodified model). Yields to the event loop every few steps so a
 * worker can receive Cancel; throws "training cancelled" when `signal` aborts.
 * Answers: which low-rank change of the head makes the expected tokens most likely on the pool?
 *
 * @example
 * const fit = await trainHeadLora(data, { steps: 200, seed: 1, onStep: (s) => console.log(s.step, s.loss) });
 * fit.finalLoss < fit.initialLoss // true on a learnable pool
 */
export async function trainHeadLora(data: HeadData, options: TrainOptions = {}): Promise<TrainedHead> {
  checkData("trainHeadLora", data);
  const o = { ...HEAD_TRAIN_DEFAULTS, ...stripUndefined(options) };
  for (const key of ["rank", "steps", "batchSize"] as const)
    if (!(Number.isInteger(o[key]) && o[key] >= 1))
      throw new RangeError(`trainHeadLora(): ${key} must be a positive integer, got ${o[key]}`);
  for (const key of ["alpha", "learningRate"] as const)
    if (!(o[key] > 0)) throw new RangeError(`trainHeadLora(): ${key} must be > 0, got ${o[key]}`);
  if (!(o.l2 >= 0)) throw new RangeError(`trainHeadLora(): l2 must be ≥ 0, got ${o.l2}`);
  const { dim, vocab, n } = data;
  const r = o.rank;
  const rng = seededRng("trainHeadLora", o.seed);
  const a = Float32Array.from({ length: dim * r }, () => gaussian(rng) / Math.sqrt(dim));
  const b = new Float32Array(r * vocab);
  const adapter = { rank: r, a, b, scale: o.alpha / r };
  const initialLoss = headLossAndGradient(data, adapter).loss;
  const adam = new Adam([a, b], o.learningRate);
  const every = options.progressEvery ?? 10;
  const batch = Math.min(o.batchSize, n);
  const next = epochOrder(n, rng);
  const rows = new Int32Array(batch);
  for (let step = 1; step <= o.steps; step++) {
    if (options.signal?.aborted) throw new Error("training cancelled");
    for (let t = 0; t < batch; t++) rows[t] = next();
    const { loss, gradA, gradB } = headLossAndGradient(data, adapter, { rows, l2: o.l2 });
    adam.step([gradA, gradB]);
    if (step % every === 0 || step === o.steps) {
      options.onStep?.({ step, steps: o.steps, loss });
      // Let a worker's message loop run (Cancel arrives as a message).
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
  if (options.signal?.aborted) throw new Error("training cancelled");
  return {
    adapter,
    initialLoss,
    finalLoss: headLossAndGradient(data, adapter).loss,
    steps: o.steps,
    options: {
      rank: o.rank,
      alpha: o.alpha,
      steps: o.steps,
      batchSize: o.batchSize,
      learningRate: o.learningRate,
      l2: o.l2,
      seed: o.seed,
    },
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
