import { describe, expect, it } from "vitest";
import {
  lastLayerLoss,
  prepareCase,
  projectionShape,
  type AdaptedProjection,
  type LastLayerWeights,
  type LayerAdapter,
} from "./last-layer.ts";

/** A small random layer (dim 8, 2 heads, inner 6, vocab 5), deterministic. */
function randomWeights(): LastLayerWeights {
  let state = 12345;
  const rand = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  };
  const m = (n: number, s = 0.6) => Float32Array.from({ length: n }, () => rand() * s);
  const dim = 8,
    inner = 6,
    vocab = 5;
  return {
    dim,
    heads: 2,
    headDim: 4,
    inner,
    vocab,
    eps: 1e-5,
    ropeTheta: 10000,
    q: m(dim * dim),
    k: m(dim * dim),
    v: m(dim * dim),
    o: m(dim * dim),
    inputNorm: Float32Array.from({ length: dim }, () => 1 + rand() * 0.4),
    postNorm: Float32Array.from({ length: dim }, () => 1 + rand() * 0.4),
    finalNorm: Float32Array.from({ length: dim }, () => 1 + rand() * 0.4),
    gate: m(dim * inner),
    up: m(dim * inner),
    down: m(inner * dim),
    head: m(dim * vocab, 1.5),
  };
}

function adapters(w: LastLayerWeights, targets: readonly AdaptedProjection[], rank = 2): LayerAdapter[] {
  let state = 777;
  const rand = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  };
  return targets.map((target) => {
    const [rows, cols] = projectionShape(w, target);
    // B ≠ 0 so every path of the gradient is exercised (training starts at B = 0).
    return {
      target,
      rank,
      a: Float32Array.from({ length: rows * rank }, () => rand()),
      b: Float32Array.from({ length: rank * cols }, () => rand()),
      scale: 1.5,
    };
  });
}

describe("lastLayerLoss", () => {
  const w = randomWeights();
  const cases = [
    { length: 6, queries: Int32Array.of(3, 5), targets: Int32Array.of(1, 4) },
    { length: 4, queries: Int32Array.of(2), targets: Int32Array.of(0) },
  ].map((c, i) =>
    prepareCase(w, { ...c, x: Float32Array.from({ length: c.length * w.dim }, (_, j) => Math.sin(j * 0.7 + i) * 2) }),
  );

  it("matches central finite differences for A and B of adapters on q, k, v, o and the head", () => {
    const all = adapters(w, ["q", "k", "v", "o", "head"]);
    const { grads, loss } = lastLayerLoss(w, cases, all);
    expect(Number.isFinite(loss)).toBe(true);
    let checked = 0;
    for (const [n, adapter] of all.entries()) {
      for (const which of ["a", "b"] as const) {
        const values = adapter[which];
        for (let i = 0; i < values.length; i += 3) {
          const keep = values[i]!;
          values[i] = keep + 1e-3;
          const up = values[i]!;
          const lossUp = lastLayerLoss(w, cases, all, false).loss;
          values[i] = keep - 1e-3;
          const down = values[i]!;
          const lossDown = lastLayerLoss(w, cases, all, false).loss;
          values[i] = keep;
          const numeric = (lossUp - lossDown) / (up - down);
          const analytic = grads[n]![which][i]!;
          expect(Math.abs(analytic - numeric), `${adapter.target}.${which}[${i}]`).toBeLessThan(
            1e-4 + 1e-3 * Math.abs(numeric),
          );
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("with no adapter (or adapters with B = 0) gives the same logits; a wrong-sized adapter is refused by name", () => {
    const plain = lastLayerLoss(w, cases, [], false);
    const zeroB = adapters(w, ["q", "v"]).map((a) => ({ ...a, b: new Float32Array(a.b.length) }));
    expect(lastLayerLoss(w, cases, zeroB, false).logits).toEqual(plain.logits);
    expect(plain.rows).toBe(3);
    expect(() =>
      lastLayerLoss(w, cases, [{ target: "k", rank: 2, a: new Float32Array(3), b: new Float32Array(16), scale: 1 }]),
    ).toThrow("the 'k' adapter must be A [8, 2] and B [2, 8], got 3 and 16 values");
    expect(() =>
      prepareCase(w, { length: 2, x: new Float32Array(16), queries: Int32Array.of(2), targets: Int32Array.of(0) }),
    ).toThrow("query 0 is position 2, outside 0…1");
  });
});
