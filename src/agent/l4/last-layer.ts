/**
 * The last decoder layer of a Llama-shaped model (RMSNorm, RoPE, unfused
 * multi-head attention, SwiGLU MLP, no biases), then the final norm and the
 * language-model head, written out in plain loops with its backward pass — so
 * L4 can train LoRA adapters on that layer's attention projections without an
 * autograd library. It reads the cached input of the layer (the previous
 * layer's hidden state at every position), which no adapter here changes.
 *
 * Why only the queries' rows: the last layer's output at a position feeds
 * nothing but the head at that position, so only the rows that predict an
 * answer token need the full layer; the other positions contribute their keys
 * and values (one projection each). For one query row at position p:
 *
 *   n   = rmsnorm(x)·g₁                    (every position)
 *   K   = rope(n·(Wk + s·Ak·Bk)),  V = n·(Wv + s·Av·Bv)
 *   q   = rope(n_p·(Wq + s·Aq·Bq))
 *   a_h = softmax_{j ≤ p}(q_h·K_{j,h} / √d_h) · V_{·,h}     (each head h)
 *   x₁  = x_p + a·(Wo + s·Ao·Bo)
 *   x₂  = x₁ + (silu(m·Wg) ⊙ m·Wu)·Wd,   m = rmsnorm(x₁)·g₂
 *   z   = rmsnorm(x₂)·g_f·(Wh + s·Ah·Bh),   loss = logsumexp(z) − z_y
 *
 * Weights are [in, out] (the ONNX MatMul's x·W). `lastLayerLoss` walks the
 * same steps backwards for ∂loss/∂A and ∂loss/∂B of every adapter; the test
 * beside it checks them against finite differences, and `layer-pool.ts` checks
 * the forward against the model's own runtime on every training case.
 */

/** The weights of the last layer, the final norm and the head, as the decoder file holds them. */
export interface LastLayerWeights {
  readonly dim: number;
  readonly heads: number;
  readonly headDim: number;
  /** The MLP's inner width. */
  readonly inner: number;
  readonly vocab: number;
  /** RMSNorm's ε. */
  readonly eps: number;
  /** RoPE's base θ. */
  readonly ropeTheta: number;
  /** [dim, dim] each. */
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  readonly o: Float32Array;
  /** [dim] each. */
  readonly inputNorm: Float32Array;
  readonly postNorm: Float32Array;
  readonly finalNorm: Float32Array;
  /** [dim, inner], [dim, inner], [inner, dim]. */
  readonly gate: Float32Array;
  readonly up: Float32Array;
  readonly down: Float32Array;
  /** [dim, vocab]. */
  readonly head: Float32Array;
}

/** One training sequence: the layer's input at every position, and the rows that predict a target token. */
export interface LayerCase {
  /** Positions T. */
  readonly length: number;
  /** [T, dim]: the input of the last layer (the previous layer's output) at every position. */
  readonly x: Float32Array;
  /** Positions whose output predicts `targets[i]` (teacher-forced: the position before each answer token). */
  readonly queries: Int32Array;
  readonly targets: Int32Array;
}

/** The projections an adapter may sit on. */
export type AdaptedProjection = "q" | "k" | "v" | "o" | "head";

/** One LoRA adapter: W + s·A·B for the projection it names; A [in, rank], B [rank, out], row-major. */
export interface LayerAdapter {
  readonly target: AdaptedProjection;
  readonly rank: number;
  readonly a: Float32Array;
  readonly b: Float32Array;
  readonly scale: number;
}

/** [in, out] of a projection. */
export function projectionShape(w: LastLayerWeights, target: AdaptedProjection): [number, number] {
  return target === "head" ? [w.dim, w.vocab] : [w.dim, w.dim];
}

/** out[j] (+)= Σᵢ x[i]·W[i, j] for W [rows, cols]. */
function vecMat(x: ArrayLike<number>, xAt: number, w: Float32Array, rows: number, cols: number, out: Float64Array) {
  out.fill(0);
  for (let i = 0; i < rows; i++) {
    const xi = x[xAt + i]!;
    if (xi === 0) continue;
    const row = i * cols;
    for (let j = 0; j < cols; j++) out[j]! += xi * w[row + j]!;
  }
}

/** out[i] = Σⱼ W[i, j]·g[j] (the product with Wᵀ, a gradient's way back through x·W). */
function matVecT(w: Float32Array, rows: number, cols: number, g: ArrayLike<number>, out: Float64Array) {
  for (let i = 0; i < rows; i++) {
    let sum = 0;
    const row = i * cols;
    for (let j = 0; j < cols; j++) sum += w[row + j]! * g[j]!;
    out[i] = sum;
  }
}

/** y = x·r·g with r = 1/√(mean(x²) + ε); returns r. */
function rmsNorm(x: ArrayLike<number>, at: number, g: Float32Array, eps: number, y: Float64Array): number {
  const d = g.length;
  let ss = 0;
  for (let i = 0; i < d; i++) ss += x[at + i]! * x[at + i]!;
  const r = 1 / Math.sqrt(ss / d + eps);
  for (let i = 0; i < d; i++) y[i] = x[at + i]! * r * g[i]!;
  return r;
}

/** ∂loss/∂x of y = rmsNorm(x): r·(dy⊙g) − r³·x·Σ(dy⊙g⊙x)/d, added to dx. */
function rmsNormBack(x: ArrayLike<number>, r: number, g: Float32Array, dy: ArrayLike<number>, dx: Float64Array) {
  const d = g.length;
  let dot = 0;
  for (let i = 0; i < d; i++) dot += dy[i]! * g[i]! * x[i]!;
  const c = (r * r * r * dot) / d;
  for (let i = 0; i < d; i++) dx[i]! += r * dy[i]! * g[i]! - c * x[i]!;
}

/**
 * RoPE on every head of `v` at position `pos` (rotate_half form: pairs (i, i + d_h/2)), in place; `sign` −1 is
 * the inverse rotation, which is also the backward pass (a rotation's transpose).
 */
function rope(v: Float64Array, at: number, pos: number, w: LastLayerWeights, sign: 1 | -1): void {
  const half = w.headDim / 2;
  for (let h = 0; h < w.heads; h++) {
    const base = at + h * w.headDim;
    for (let i = 0; i < half; i++) {
      const angle = pos * Math.pow(w.ropeTheta, (-2 * i) / w.headDim);
      const c = Math.cos(angle);
      const s = sign * Math.sin(angle);
      const a = v[base + i]!;
      const b = v[base + i + half]!;
      v[base + i] = a * c - b * s;
      v[base + i + half] = b * c + a * s;
    }
  }
}

/** The adapters by projection (at most one each). */
function byTarget(adapters: readonly LayerAdapter[]): Partial<Record<AdaptedProjection, LayerAdapter>> {
  const out: Partial<Record<AdaptedProjection, LayerAdapter>> = {};
  for (const a of adapters) {
    if (out[a.target]) throw new Error(`lastLayerLoss(): two adapters on '${a.target}'`);
    out[a.target] = a;
  }
  return out;
}

/** u = x·A (rank values), then out += s·u·B. Returns u. */
function loraAdd(x: ArrayLike<number>, at: number, ad: LayerAdapter, rows: number, cols: number, out: Float64Array) {
  const u = new Float64Array(ad.rank);
  for (let i = 0; i < rows; i++) {
    const xi = x[at + i]!;
    for (let k = 0; k < ad.rank; k++) u[k]! += xi * ad.a[i * ad.rank + k]!;
  }
  for (let k = 0; k < ad.rank; k++) {
    const uk = ad.scale * u[k]!;
    for (let j = 0; j < cols; j++) out[j]! += uk * ad.b[k * cols + j]!;
  }
  return u;
}

/** Adds an adapter's gradient for one row: ∂B += s·uᵀ·g, ∂A += s·xᵀ·(g·Bᵀ); returns g·Bᵀ (for ∂x). */
function loraBack(
  x: ArrayLike<number>,
  at: number,
  u: Float64Array,
  g: ArrayLike<number>,
  ad: LayerAdapter,
  rows: number,
  cols: number,
  grad: { a: Float64Array; b: Float64Array },
): Float64Array {
  const gb = new Float64Array(ad.rank);
  for (let k = 0; k < ad.rank; k++) {
    let sum = 0;
    for (let j = 0; j < cols; j++) {
      grad.b[k * cols + j]! += ad.scale * u[k]! * g[j]!;
      sum += g[j]! * ad.b[k * cols + j]!;
    }
    gb[k] = sum;
  }
  for (let i = 0; i < rows; i++) {
    const xi = x[at + i]!;
    for (let k = 0; k < ad.rank; k++) grad.a[i * ad.rank + k]! += ad.scale * xi * gb[k]!;
  }
  return gb;
}

/** A case's quantities that no adapter changes, computed once: the normed inputs and their unadapted K, V and Q rows. */
export interface PreparedCase extends LayerCase {
  /** [T, dim]: rmsnorm(x)·g₁. */
  readonly n: Float64Array;
  /** [T, dim]: n·Wk (before RoPE) and n·Wv. */
  readonly k0: Float64Array;
  readonly v0: Float64Array;
}

/** The parts of `c` that stay fixed while the adapters train (see `PreparedCase`). */
export function prepareCase(w: LastLayerWeights, c: LayerCase): PreparedCase {
  const { dim } = w;
  const T = c.length;
  if (c.x.length !== T * dim) throw new RangeError(`prepareCase(): x must be [${T}, ${dim}], got ${c.x.length} values`);
  if (c.queries.length !== c.targets.length)
    throw new RangeError(`prepareCase(): ${c.queries.length} queries for ${c.targets.length} targets`);
  for (const [i, p] of c.queries.entries()) {
    if (!(p >= 0 && p < T)) throw new RangeError(`prepareCase(): query ${i} is position ${p}, outside 0…${T - 1}`);
    const y = c.targets[i]!;
    if (!(y >= 0 && y < w.vocab))
      throw new RangeError(`prepareCase(): target ${i} is token ${y}, outside the vocabulary`);
  }
  const n = new Float64Array(T * dim);
  const k0 = new Float64Array(T * dim);
  const v0 = new Float64Array(T * dim);
  const row = new Float64Array(dim);
  const out = new Float64Array(dim);
  for (let t = 0; t < T; t++) {
    rmsNorm(c.x, t * dim, w.inputNorm, w.eps, row);
    n.set(row, t * dim);
    vecMat(row, 0, w.k, dim, dim, out);
    k0.set(out, t * dim);
    vecMat(row, 0, w.v, dim, dim, out);
    v0.set(out, t * dim);
  }
  return { ...c, n, k0, v0 };
}

/** Gradients by adapter, in the order the adapters were given. */
export interface LayerGradient {
  readonly loss: number;
  /** The summed cross-entropy and the number of rows it sums over. */
  readonly rows: number;
  readonly grads: readonly { readonly a: Float64Array; readonly b: Float64Array }[];
  /** [rows, vocab]: the adapted logits of every query row, in case order. */
  readonly logits: Float32Array;
}

/**
 * The mean cross-entropy of the adapted last layer on the query rows of `cases`, its logits, and (unless
 * `backward` is false) ∂loss/∂A, ∂loss/∂B of every adapter (λ/2·‖·‖² not included: the trainer adds it).
 * Answers: how wrong is the model on these rows with these adapters, and which way should each adapter move?
 *
 * @example
 * const c = prepareCase(weights, { length: 40, x, queries: Int32Array.of(38), targets: Int32Array.of(yes) });
 * lastLayerLoss(weights, [c], []).logits // the model's own logits at position 38 (no adapter)
 */
export function lastLayerLoss(
  w: LastLayerWeights,
  cases: readonly PreparedCase[],
  adapters: readonly LayerAdapter[],
  backward = true,
): LayerGradient {
  const { dim, heads, headDim, inner, vocab } = w;
  const ad = byTarget(adapters);
  for (const a of adapters) {
    const [rows, cols] = projectionShape(w, a.target);
    if (a.a.length !== rows * a.rank || a.b.length !== a.rank * cols)
      throw new RangeError(
        `lastLayerLoss(): the '${a.target}' adapter must be A [${rows}, ${a.rank}] and B [${a.rank}, ${cols}], got ${a.a.length} and ${a.b.length} values`,
      );
  }
  const grads = adapters.map((a) => ({ a: new Float64Array(a.a.length), b: new Float64Array(a.b.length) }));
  const gradOf = (t: AdaptedProjection) => grads[adapters.findIndex((a) => a.target === t)]!;
  const total = cases.reduce((sum, c) => sum + c.queries.length, 0);
  const logitsOut = new Float32Array(total * vocab);
  const scale = 1 / Math.sqrt(headDim);
  let loss = 0;
  let row = 0;
  for (const c of cases) {
    const last = Math.max(...c.queries) + 1;
    // Keys and values of every position a query sees, with their adapters; keys rotated.
    const K = Float64Array.from(c.k0.subarray(0, last * dim));
    const V = Float64Array.from(c.v0.subarray(0, last * dim));
    const uK: Float64Array[] = [];
    const uV: Float64Array[] = [];
    const tmp = new Float64Array(dim);
    for (let t = 0; t < last; t++) {
      if (ad.k) {
        tmp.fill(0);
        uK.push(loraAdd(c.n, t * dim, ad.k, dim, dim, tmp));
        for (let j = 0; j < dim; j++) K[t * dim + j]! += tmp[j]!;
      }
      if (ad.v) {
        tmp.fill(0);
        uV.push(loraAdd(c.n, t * dim, ad.v, dim, dim, tmp));
        for (let j = 0; j < dim; j++) V[t * dim + j]! += tmp[j]!;
      }
      rope(K, t * dim, t, w, 1);
    }
    const dK = backward ? new Float64Array(last * dim) : undefined;
    const dV = backward ? new Float64Array(last * dim) : undefined;
    for (let qi = 0; qi < c.queries.length; qi++, row++) {
      const p = c.queries[qi]!;
      const y = c.targets[qi]!;
      // q, rotated.
      const q = new Float64Array(dim);
      vecMat(c.n, p * dim, w.q, dim, dim, q);
      const uq = ad.q ? loraAdd(c.n, p * dim, ad.q, dim, dim, q) : undefined;
      rope(q, 0, p, w, 1);
      // Attention over positions 0…p, head by head.
      const probs = new Float64Array(heads * (p + 1));
      const a = new Float64Array(dim);
      for (let h = 0; h < heads; h++) {
        const off = h * headDim;
        let max = -Infinity;
        for (let j = 0; j <= p; j++) {
          let sc = 0;
          for (let e = 0; e < headDim; e++) sc += q[off + e]! * K[j * dim + off + e]!;
          sc *= scale;
          probs[h * (p + 1) + j] = sc;
          if (sc > max) max = sc;
        }
        let sum = 0;
        for (let j = 0; j <= p; j++) sum += probs[h * (p + 1) + j] = Math.exp(probs[h * (p + 1) + j]! - max);
        for (let j = 0; j <= p; j++) {
          const pj = (probs[h * (p + 1) + j]! /= sum);
          for (let e = 0; e < headDim; e++) a[off + e]! += pj * V[j * dim + off + e]!;
        }
      }
      // Output projection and residual.
      const x1 = new Float64Array(dim);
      vecMat(a, 0, w.o, dim, dim, x1);
      const uo = ad.o ? loraAdd(a, 0, ad.o, dim, dim, x1) : undefined;
      for (let j = 0; j < dim; j++) x1[j]! += c.x[p * dim + j]!;
      // MLP and residual.
      const m = new Float64Array(dim);
      const r2 = rmsNorm(x1, 0, w.postNorm, w.eps, m);
      const gt = new Float64Array(inner);
      const upv = new Float64Array(inner);
      vecMat(m, 0, w.gate, dim, inner, gt);
      vecMat(m, 0, w.up, dim, inner, upv);
      const hm = new Float64Array(inner);
      for (let i = 0; i < inner; i++) hm[i] = (gt[i]! / (1 + Math.exp(-gt[i]!))) * upv[i]!;
      const x2 = new Float64Array(dim);
      vecMat(hm, 0, w.down, inner, dim, x2);
      for (let j = 0; j < dim; j++) x2[j]! += x1[j]!;
      // Final norm and head.
      const f = new Float64Array(dim);
      const r3 = rmsNorm(x2, 0, w.finalNorm, w.eps, f);
      const z = new Float64Array(vocab);
      vecMat(f, 0, w.head, dim, vocab, z);
      const uh = ad.head ? loraAdd(f, 0, ad.head, dim, vocab, z) : undefined;
      let max = -Infinity;
      for (let j = 0; j < vocab; j++) if (z[j]! > max) max = z[j]!;
      let sum = 0;
      for (let j = 0; j < vocab; j++) sum += Math.exp(z[j]! - max);
      const logZ = max + Math.log(sum);
      loss += logZ - z[y]!;
      for (let j = 0; j < vocab; j++) logitsOut[row * vocab + j] = z[j]!;
      if (!backward) continue;

      // Backward, from the logits down to q, K and V.
      const dz = new Float64Array(vocab);
      for (let j = 0; j < vocab; j++) dz[j] = (Math.exp(z[j]! - logZ) - (j === y ? 1 : 0)) / total;
      const df = new Float64Array(dim);
      matVecT(w.head, dim, vocab, dz, df);
      if (ad.head) {
        const gb = loraBack(f, 0, uh!, dz, ad.head, dim, vocab, gradOf("head"));
        for (let i = 0; i < dim; i++)
          for (let k = 0; k < ad.head.rank; k++) df[i]! += ad.head.scale * ad.head.a[i * ad.head.rank + k]! * gb[k]!;
      }
      const dx2 = new Float64Array(dim);
      rmsNormBack(x2, r3, w.finalNorm, df, dx2);
      const dhm = new Float64Array(inner);
      matVecT(w.down, inner, dim, dx2, dhm);
      const dgt = new Float64Array(inner);
      const dup = new Float64Array(inner);
      for (let i = 0; i < inner; i++) {
        const sig = 1 / (1 + Math.exp(-gt[i]!));
        dup[i] = dhm[i]! * gt[i]! * sig;
        dgt[i] = dhm[i]! * upv[i]! * sig * (1 + gt[i]! * (1 - sig));
      }
      const dm = new Float64Array(dim);
      const dmUp = new Float64Array(dim);
      matVecT(w.gate, dim, inner, dgt, dm);
      matVecT(w.up, dim, inner, dup, dmUp);
      for (let i = 0; i < dim; i++) dm[i]! += dmUp[i]!;
      const dx1 = Float64Array.from(dx2);
      rmsNormBack(x1, r2, w.postNorm, dm, dx1);
      const da = new Float64Array(dim);
      matVecT(w.o, dim, dim, dx1, da);
      if (ad.o) {
        const gb = loraBack(a, 0, uo!, dx1, ad.o, dim, dim, gradOf("o"));
        for (let i = 0; i < dim; i++)
          for (let k = 0; k < ad.o.rank; k++) da[i]! += ad.o.scale * ad.o.a[i * ad.o.rank + k]! * gb[k]!;
      }
      const dq = new Float64Array(dim);
      for (let h = 0; h < heads; h++) {
        const off = h * headDim;
        const P = probs.subarray(h * (p + 1), (h + 1) * (p + 1));
        const dP = new Float64Array(p + 1);
        let dot = 0;
        for (let j = 0; j <= p; j++) {
          let s = 0;
          for (let e = 0; e < headDim; e++) {
            s += da[off + e]! * V[j * dim + off + e]!;
            dV![j * dim + off + e]! += P[j]! * da[off + e]!;
          }
          dP[j] = s;
          dot += P[j]! * s;
        }
        for (let j = 0; j <= p; j++) {
          const ds = P[j]! * (dP[j]! - dot) * scale;
          for (let e = 0; e < headDim; e++) {
            dq[off + e]! += ds * K[j * dim + off + e]!;
            dK![j * dim + off + e]! += ds * q[off + e]!;
          }
        }
      }
      if (ad.q) {
        rope(dq, 0, p, w, -1);
        loraBack(c.n, p * dim, uq!, dq, ad.q, dim, dim, gradOf("q"));
      }
    }
    if (backward && (ad.k || ad.v)) {
      for (let t = 0; t < last; t++) {
        if (ad.k) {
          rope(dK!, t * dim, t, w, -1);
          loraBack(c.n, t * dim, uK[t]!, dK!.subarray(t * dim, (t + 1) * dim), ad.k, dim, dim, gradOf("k"));
        }
        if (ad.v) loraBack(c.n, t * dim, uV[t]!, dV!.subarray(t * dim, (t + 1) * dim), ad.v, dim, dim, gradOf("v"));
      }
    }
  }
  return { loss: loss / Math.max(1, total), rows: total, grads, logits: logitsOut };
}
