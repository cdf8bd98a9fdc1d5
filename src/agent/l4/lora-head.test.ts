import { describe, expect, it } from "vitest";
import { adaptedLogits, headLossAndGradient, trainHeadLora, type HeadData } from "./lora-head.ts";

/** Deterministic normal draws (Box–Muller over an LCG), for the test's data. */
function draws(seed: number): () => number {
  let s = seed >>> 0;
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

/** A pool where the head's readout is wrong in a low-rank way: targets follow x·T for a rank-1 T the base head lacks. */
function pool(n: number, dim: number, vocab: number, seed: number): HeadData {
  const g = draws(seed);
  const x = Float32Array.from({ length: n * dim }, g);
  const z0 = Float32Array.from({ length: n * vocab }, () => 0.3 * g());
  const dir = Float32Array.from({ length: dim }, g);
  const y = Int32Array.from({ length: n }, (_, i) => {
    let p = 0;
    for (let d = 0; d < dim; d++) p += x[i * dim + d]! * dir[d]!;
    return p > 0 ? 1 : 2;
  });
  return { n, dim, vocab, x, z0, y };
}

describe("the head adapter's closed-form gradient", () => {
  it("matches central finite differences of the loss in every entry of A and B", () => {
    const data = pool(7, 5, 4, 3);
    const g = draws(9);
    const rank = 2;
    const a = Float32Array.from({ length: 5 * rank }, () => 0.5 * g());
    const b = Float32Array.from({ length: rank * 4 }, () => 0.5 * g());
    const adapter = { rank, a, b, scale: 1.5 };
    const rows = [0, 2, 3, 6];
    const l2 = 0.01;
    const { gradA, gradB } = headLossAndGradient(data, adapter, { rows, l2 });
    const h = 1e-3;
    for (const [w, grad] of [
      [a, gradA],
      [b, gradB],
    ] as const)
      for (let i = 0; i < w.length; i++) {
        const keep = w[i]!;
        w[i] = keep + h;
        const up = headLossAndGradient(data, adapter, { rows, l2 }).loss;
        w[i] = keep - h;
        const down = headLossAndGradient(data, adapter, { rows, l2 }).loss;
        w[i] = keep;
        expect(grad[i]).toBeCloseTo((up - down) / (2 * h), 4);
      }
    // B = 0: the loss is the unadapted head's mean cross-entropy, and A gets no gradient.
    const zero = headLossAndGradient(data, { rank, a, b: new Float32Array(rank * 4), scale: 1.5 });
    let ce = 0;
    for (let i = 0; i < 7; i++) {
      const row = Array.from(data.z0.subarray(i * 4, i * 4 + 4));
      ce += Math.log(row.reduce((s, v) => s + Math.exp(v), 0)) - row[data.y[i]!]!;
    }
    expect(zero.loss).toBeCloseTo(ce / 7, 5);
    expect(Math.max(...zero.gradA.map(Math.abs))).toBe(0);
  });

  it("training is seeded, lowers the loss, streams (step, loss) and stops on abort", async () => {
    const data = pool(200, 8, 5, 1);
    const steps: number[] = [];
    const fit = await trainHeadLora(data, { steps: 120, seed: 4, onStep: (s) => steps.push(s.step) });
    expect(fit.finalLoss).toBeLessThan(0.5 * fit.initialLoss);
    expect(steps).toEqual(Array.from({ length: 12 }, (_, i) => 10 * (i + 1)));
    const again = await trainHeadLora(data, { steps: 120, seed: 4 });
    expect([...again.adapter.b]).toEqual([...fit.adapter.b]);
    const other = await trainHeadLora(data, { steps: 120, seed: 5 });
    expect([...other.adapter.a]).not.toEqual([...fit.adapter.a]);
    // The trained logits put the target first on most rows.
    const z = adaptedLogits(data, fit.adapter);
    let right = 0;
    for (let i = 0; i < data.n; i++) {
      const row = Array.from(z.subarray(i * 5, i * 5 + 5));
      if (row.indexOf(Math.max(...row)) === data.y[i]) right++;
    }
    expect(right / data.n).toBeGreaterThan(0.9);
    const controller = new AbortController();
    await expect(
      trainHeadLora(data, {
        steps: 1000,
        onStep: (s) => s.step === 20 && controller.abort(),
        signal: controller.signal,
      }),
    ).rejects.toThrow(/training cancelled/);
  });

  it("names what is wrong with its input", async () => {
    const data = pool(4, 3, 3, 1);
    await expect(trainHeadLora({ ...data, y: Int32Array.from([0, 1, 7, 0]) })).rejects.toThrow(
      /target 2 is token 7, outside 0…2/,
    );
    await expect(trainHeadLora({ ...data, x: new Float32Array(5) })).rejects.toThrow(
      /x must hold n·dim = 12 values, got 5/,
    );
    await expect(trainHeadLora(data, { rank: 0 })).rejects.toThrow(/rank must be a positive integer, got 0/);
  });
});
