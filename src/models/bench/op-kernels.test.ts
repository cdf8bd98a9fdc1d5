import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { oneOperatorModel, operatorInput, SINGLE_OPERATORS } from "./op-kernels.ts";

async function run(op: string, x: Float32Array, domain?: string): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(oneOperatorModel(op, x.length, domain));
  try {
    const { y } = await session.run({ x: new ort.Tensor("float32", x, [x.length]) });
    return y!.data as Float32Array;
  } finally {
    await session.release();
  }
}

describe("oneOperatorModel", () => {
  it("builds a graph onnxruntime runs as y = op(x), for every operator bench:ops times", async () => {
    const x = Float32Array.from([-2, -0.5, 0, 1, 3]);
    // erf(1) = 0.8427007929, erf(-2) = -0.9953222650; GELU(1) = Φ(1) = 0.8413447461.
    const expected: Record<string, number[]> = {
      Erf: [-0.995322265, -0.5204998778, 0, 0.8427007929, 0.9999779095],
      Gelu: [-0.0455002639, -0.1542687694, 0, 0.8413447461, 2.9959503059],
      Exp: [...x].map(Math.exp),
      Tanh: [...x].map(Math.tanh),
      Sigmoid: [...x].map((v) => 1 / (1 + Math.exp(-v))),
      Relu: [0, 0, 0, 1, 3],
    };
    for (const { op, ...rest } of SINGLE_OPERATORS) {
      const y = await run(op, x, "domain" in rest ? rest.domain : undefined);
      const misses = [...y].flatMap((v, i) =>
        Math.abs(v - expected[op]![i]!) < 1e-5 ? [] : [`${op}(${x[i]}) = ${v}`],
      );
      expect(misses, op).toEqual([]);
    }
  });

  it("refuses a size or a name that cannot make a graph", () => {
    expect(() => oneOperatorModel("Erf", 0)).toThrow(/n must be a whole number > 0, got 0/);
    expect(() => oneOperatorModel("erf;", 4)).toThrow(/'erf;' is not an ONNX operator name/);
  });
});

describe("operatorInput", () => {
  it("draws the same standard-normal values for a seed, and others for another seed", () => {
    const a = operatorInput(20_000, 1);
    expect(operatorInput(20_000, 1)).toEqual(a);
    expect(operatorInput(20_000, 2)).not.toEqual(a);
    const mean = a.reduce((s, v) => s + v, 0) / a.length;
    const variance = a.reduce((s, v) => s + (v - mean) ** 2, 0) / a.length;
    // Standard errors at n = 20,000: 0.007 for the mean, 0.01 for the variance.
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.05);
    expect(() => operatorInput(1.5, 1)).toThrow(/n must be a whole number > 0, got 1.5/);
  });
});
