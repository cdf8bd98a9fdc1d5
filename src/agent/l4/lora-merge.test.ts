import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { mergeLora, readInitializer } from "./lora-merge.ts";

const HEAD = join(REPO_ROOT, "models/tiny-vlm/onnx/lm_head.onnx");
/** lm_head.onnx: logits = RMSNorm(hidden) · W, W = this initializer, [64, 29]. */
const W = "onnx::MatMul_34";

/** Deterministic uniform draws in (0, 1) (mulberry32), for the test's weights. */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(n: number, seed: number, sd: number): Float32Array {
  const next = uniform(seed);
  return Float32Array.from({ length: n }, () => {
    const u = Math.max(next(), 1e-12);
    return sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  });
}

async function logits(bytes: Uint8Array, hidden: Float32Array, tokens: number): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(bytes);
  try {
    const out = await session.run({ hidden_states: new ort.Tensor("float32", hidden, [1, tokens, 64]) });
    return out["logits"]!.data as Float32Array;
  } finally {
    await session.release();
  }
}

describe("LoRA merged into the ONNX initializers", () => {
  const base = new Uint8Array(readFileSync(HEAD));
  const rank = 2;
  const a = gaussian(64 * rank, 1, 0.2);
  const b = gaussian(rank * 29, 2, 0.2);

  it("writes W + s·A·B into the initializer and nothing else changes", () => {
    const merged = mergeLora(base, [{ weight: W, rank, a, b, scale: 2 }]);
    const before = readInitializer(base, W);
    const after = readInitializer(merged, W);
    expect(after.dims).toEqual([64, 29]);
    for (const [i, j] of [
      [0, 0],
      [5, 17],
      [63, 28],
    ] as const) {
      let ab = 0;
      for (let k = 0; k < rank; k++) ab += a[i * rank + k]! * b[k * 29 + j]!;
      expect(after.values[i * 29 + j]).toBeCloseTo(before.values[i * 29 + j]! + 2 * ab, 5);
    }
    // A zero adapter gives the same weights back, and the file stays the same size (only that tensor was rewritten).
    const zero = mergeLora(base, [{ weight: W, rank, a, b: new Float32Array(rank * 29), scale: 2 }]);
    expect(readInitializer(zero, W).values).toEqual(before.values);
    expect(Math.abs(zero.length - base.length)).toBeLessThan(16);
    expect(() => mergeLora(base, [{ weight: "nope", rank, a, b, scale: 1 }])).toThrow(/no initializer 'nope'/);
    expect(() => mergeLora(base, [{ weight: W, rank: 3, a, b, scale: 1 }])).toThrow(
      /A must be \[64, 3\] \(192 values, got 128\)/,
    );
  });

  it("onnxruntime runs the merged file: its logits are the base logits plus the adapter's contribution, linear in B and in B's row space", async () => {
    const tokens = 3;
    const hidden = gaussian(tokens * 64, 3, 1);
    const l0 = await logits(base, hidden, tokens);
    const l1 = await logits(mergeLora(base, [{ weight: W, rank, a, b, scale: 1 }]), hidden, tokens);
    const l2 = await logits(mergeLora(base, [{ weight: W, rank, a, b, scale: 2 }]), hidden, tokens);
    const d1 = l1.map((v, i) => v - l0[i]!);
    expect(Math.max(...d1.map(Math.abs))).toBeGreaterThan(0.01);
    d1.forEach((v, i) => expect(l2[i]! - l0[i]!).toBeCloseTo(2 * v, 4));
    // Per position the change is u·B for some u ∈ ℝ^r (u = RMSNorm(h)·A): solve for u by least squares, residual ~ 0.
    for (let t = 0; t < tokens; t++) {
      const row = d1.subarray(t * 29, t * 29 + 29);
      const g = [0, 0, 0, 0];
      const rhs = [0, 0];
      for (let j = 0; j < 29; j++) {
        const b0 = b[j]!,
          b1 = b[29 + j]!;
        g[0]! += b0 * b0;
        g[1]! += b0 * b1;
        g[3]! += b1 * b1;
        rhs[0]! += b0 * row[j]!;
        rhs[1]! += b1 * row[j]!;
      }
      const det = g[0]! * g[3]! - g[1]! * g[1]!;
      const u0 = (rhs[0]! * g[3]! - rhs[1]! * g[1]!) / det;
      const u1 = (g[0]! * rhs[1]! - g[1]! * rhs[0]!) / det;
      for (let j = 0; j < 29; j++) expect(row[j]).toBeCloseTo(u0 * b[j]! + u1 * b[29 + j]!, 4);
    }
  });

  it("a folder with the merged decoder is an ordinary model folder: loadModel runs it", async () => {
    const folder = join(mkdtempSync(join(tmpdir(), "evalrx-lora-")), "tiny-vlm-lora");
    cpSync(join(REPO_ROOT, "models/tiny-vlm"), folder, { recursive: true });
    const decoder = join(folder, "onnx/decoder_model_merged.onnx");
    const bytes = new Uint8Array(readFileSync(decoder));
    const q = "onnx::MatMul_405"; // layer 0's first attention projection, [64, 64]
    writeFileSync(
      decoder,
      mergeLora(bytes, [{ weight: q, rank: 4, a: gaussian(256, 4, 0.3), b: gaussian(256, 5, 0.3), scale: 4 }]),
    );
    const model = await loadModel(folder);
    try {
      const png = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/images/scene-0001.png")));
      expect(
        await model.generate({ prompt: "<image> is there a red circle ?", image: png }, { maxNewTokens: 4 }),
      ).toMatch(/\S/);
      expect(readInitializer(new Uint8Array(readFileSync(decoder)), q).values).not.toEqual(
        readInitializer(bytes, q).values,
      );
    } finally {
      await model.dispose();
    }
  });
});
