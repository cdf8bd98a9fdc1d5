/**
 * Single-operator graphs for `npm run bench:ops`: one elementwise operator over `n` floats, so that a kernel's cost
 * per element can be read on both runtimes without the rest of a model around it. The tiny VLM's forward spends
 * its page-side time in Conv and in the exact GELU (`Erf` fused into `Gelu`); these say whether such a kernel is
 * slow in ONNX Runtime Web's WebAssembly build itself (the same for every graph) or in how the model uses it.
 */
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { buildOnnxModel } from "../onnx-build.ts";
import { DTYPE } from "../onnx-read.ts";

/** Before each operator's profile events the page prints this, then the operator's name. */
export const OPERATOR_MARK = "bench:ops operator ";

/** The operators timed alone: the exact GELU and its parts, the other transcendental activations, and Relu (no math). */
export const SINGLE_OPERATORS = [
  { op: "Erf" },
  { op: "Gelu", domain: "com.microsoft" },
  { op: "Exp" },
  { op: "Tanh" },
  { op: "Sigmoid" },
  { op: "Relu" },
] as const satisfies readonly { op: string; domain?: string }[];

/**
 * The bytes of a model computing `y = op(x)` over `n` floats (opset 17; `com.microsoft` operators at version 1).
 *
 * @example oneOperatorModel("Erf", 16384) // → Uint8Array(…): x float[16384] → Erf → y float[16384]
 */
export function oneOperatorModel(op: string, n: number, domain?: string): Uint8Array {
  if (!(Number.isInteger(n) && n > 0)) throw new Error(`oneOperatorModel: n must be a whole number > 0, got ${n}`);
  if (!/^[A-Z][A-Za-z]*$/.test(op)) throw new Error(`oneOperatorModel: '${op}' is not an ONNX operator name`);
  return buildOnnxModel({
    opset: 17,
    ...(domain ? { domains: { [domain]: 1 } } : {}),
    inputs: [{ name: "x", elemType: DTYPE.float, dims: [n] }],
    outputs: [{ name: "y", elemType: DTYPE.float, dims: [n] }],
    nodes: [{ opType: op, inputs: ["x"], outputs: ["y"], name: op.toLowerCase(), ...(domain ? { domain } : {}) }],
    name: `one-${op.toLowerCase()}`,
  });
}

/**
 * `n` seeded draws from a standard normal (Box–Muller over xoroshiro128+): activations' typical range, the same
 * on both runtimes.
 *
 * @example operatorInput(4, 1) // → Float32Array(4) [ … ] (the same four numbers for seed 1, every time)
 */
export function operatorInput(n: number, seed: number): Float32Array {
  if (!(Number.isInteger(n) && n > 0)) throw new Error(`operatorInput: n must be a whole number > 0, got ${n}`);
  const rng = xoroshiro128plus(seed);
  const uniform = () => ((rng.next() >>> 0) + 0.5) / 2 ** 32;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  return out;
}
