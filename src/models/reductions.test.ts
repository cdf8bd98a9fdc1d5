import { describe, expect, it } from "vitest";
import * as R from "./reductions.ts";

// One head, T = 3, causal rows that sum to 1.
const A = Float32Array.of(1, 0, 0, 0.4, 0.6, 0, 0.2, 0.3, 0.5);
const one: R.AttentionStack = { layers: [A], heads: 1, length: 3 };
const two: R.AttentionStack = { layers: [A, A], heads: 1, length: 3 };

describe("attention reductions, by hand", () => {
  it("image share, sink mass and entropy of the query rows", () => {
    expect(R.imageAttentionShare(one, [2], [1, 2]).data[0]).toBeCloseTo(0.8, 6);
    expect(R.imageAttentionShare(one, [1, 2], [1]).data[0]).toBeCloseTo((0.6 + 0.3) / 2, 6);
    expect(R.sinkMass(one, [1, 2]).data[0]).toBeCloseTo((0.4 + 0.2) / 2, 6);
    const h = -(0.2 * Math.log(0.2) + 0.3 * Math.log(0.3) + 0.5 * Math.log(0.5));
    expect(R.attentionEntropy(one, [2]).data[0]).toBeCloseTo(h, 6);
    expect(R.attentionEntropy(one, [0]).data[0]).toBe(0);
  });

  it("rollout multiplies the residual-mixed attention through the layers", () => {
    // A' = ½A + ½I; row 2 of A' = [0.1, 0.15, 0.75]; row 2 of A'·A' = [0.205, 0.2325, 0.5625].
    expect(R.rollout(one, 2, [1], [1, 1]).data[0]).toBeCloseTo(0.15, 6);
    expect(Array.from(R.rollout(two, 2, [0, 1], [1, 2]).data)).toEqual([
      expect.closeTo(0.205, 6),
      expect.closeTo(0.2325, 6),
    ]);
  });

  it("the image map lays one query's attention out on the grid", () => {
    const map = R.imageAttentionMap(one, 2, [1, 2], [1, 2]);
    expect(map.shape).toEqual([1, 1, 2]);
    expect(Array.from(map.data)).toEqual([expect.closeTo(0.3, 6), expect.closeTo(0.5, 6)]);
    expect(() => R.imageAttentionMap(one, 2, [1, 2], [2, 2])).toThrow(/do not fill a 2×2 grid/);
  });
});

describe("logit reductions, by hand", () => {
  it("token entropy and log-probabilities from logits", () => {
    const logits = Float32Array.of(0, 0, Math.log(3), 0); // position 0: p = [½, ½]; position 1: p = [¾, ¼]
    expect(R.tokenEntropy(logits, 2).data[0]).toBeCloseTo(Math.log(2), 6);
    const lp = R.tokenLogprob(logits, 2, [0, 1, 0]);
    expect(Number.isNaN(lp.data[0])).toBe(true);
    expect(lp.data[1]).toBeCloseTo(Math.log(0.5), 6);
    expect(lp.data[2]).toBeCloseTo(Math.log(0.75), 6);
  });

  it("top-k keeps the largest values, ties to the lower index", () => {
    expect(R.topK([1, 5, 3, 5, 0], 3)).toEqual([1, 3, 2]);
    const lens = R.logitLens(Float32Array.of(0, Math.log(3)), 2, 1);
    expect(Array.from(lens.data)).toEqual([1, expect.closeTo(0.75, 6)]);
  });
});
