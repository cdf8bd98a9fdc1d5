import { describe, expect, it } from "vitest";
import { gqaDecoder } from "./fixtures/gqa-decoder.ts";
import { maxAbsDiff } from "./fixtures/max-abs-diff.ts";
import { configureOrtWasm } from "./ort-env.browser.ts";
import { webSessions } from "./ort-session.browser.ts";
import { prepareAttention } from "./prepare-attention.ts";
import { f32, i64, type PlainTensor } from "./session.ts";

/**
 * The graphs the runtime prepares in a page (the Models screen, the model
 * worker) run on ONNX Runtime Web's WASM build as they do on onnxruntime-node:
 * the same attention as PyTorch's for the layout fixtures, and a decomposed
 * GroupQueryAttention decoder equal to the fused kernel's WASM build.
 */
configureOrtWasm("/");
const sessions = webSessions("wasm");
const FIXTURES = "/src/models/fixtures/layouts/";
const bytes = async (path: string) => {
  const response = await fetch(`${FIXTURES}${path}`);
  expect(response.ok, path).toBe(true);
  return new Uint8Array(await response.arrayBuffer());
};

function lmFeeds(ids: readonly number[]): Record<string, PlainTensor> {
  const T = ids.length;
  const feeds: Record<string, PlainTensor> = {
    input_ids: i64(ids, [1, T]),
    attention_mask: i64(new Array<number>(T).fill(1), [1, T]),
    position_ids: i64(
      Array.from({ length: T }, (_, i) => i),
      [1, T],
    ),
    use_cache_branch: { type: "bool", data: Uint8Array.of(0), dims: [1] },
  };
  for (let l = 0; l < 2; l++)
    for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${kv}`] = f32(new Float32Array(0), [1, 2, 0, 8]);
  return feeds;
}

describe("prepared graphs on ONNX Runtime Web (WASM)", () => {
  for (const [name, file] of [
    ["lm-merged", "decoder_model_merged.onnx"],
    ["lm-functions", "model.onnx"],
    ["lm-3d-opset11", "model.onnx"],
  ] as const)
    it(`${name}: the attention equals PyTorch's`, async () => {
      const reference = JSON.parse(new TextDecoder().decode(await bytes(`${name}/reference.json`))) as {
        prompt: number[];
        prompt_step: { logits: number[]; attentions: number[][] };
      };
      const prepared = prepareAttention(await bytes(`${name}/onnx/${file}`), { heads: 2, layers: 2 });
      expect(prepared.status.found).toBe(2);
      const session = await sessions(prepared.bytes, { name });
      try {
        const out = await session.run(lmFeeds(reference.prompt));
        expect(maxAbsDiff(out.logits!.data as Float32Array, reference.prompt_step.logits)).toBeLessThanOrEqual(1e-4);
        for (let l = 0; l < 2; l++)
          expect(
            maxAbsDiff(out[`attentions.${l}`]!.data as Float32Array, reference.prompt_step.attentions[l]!),
          ).toBeLessThanOrEqual(1e-5);
      } finally {
        await session.release();
      }
    });

  // The WASM build cannot run this fused graph at all ("output name cannot be empty" from its GroupQueryAttention),
  // so the oracle is onnxruntime-node's fused kernel, whose outputs gqa-reference.json keeps (checked current in Node).
  it("a GroupQueryAttention decoder, decomposed, equals onnxruntime-node's fused kernel", async () => {
    const reference = (await import("./fixtures/gqa-reference.json")).default as {
      sizes: Parameters<typeof gqaDecoder>[0];
      ids: number[];
      logits: number[];
      "present.1.value": number[];
    };
    const prepared = prepareAttention(gqaDecoder(reference.sizes), { heads: 4, layers: 2 });
    expect(prepared.status.source).toBe("decomposed");
    const session = await sessions(prepared.bytes, { name: "decomposed" });
    try {
      const T = reference.ids.length;
      const feeds: Record<string, PlainTensor> = {
        input_ids: i64(reference.ids, [1, T]),
        attention_mask: i64(new Array<number>(T).fill(1), [1, T]),
      };
      for (let l = 0; l < 2; l++)
        for (const kv of ["key", "value"])
          feeds[`past_key_values.${l}.${kv}`] = f32(new Float32Array(0), [1, 2, 0, 16]);
      const out = await session.run(feeds);
      expect(maxAbsDiff(out.logits!.data as Float32Array, reference.logits)).toBeLessThanOrEqual(1e-4);
      expect(
        maxAbsDiff(out["present.1.value"]!.data as Float32Array, reference["present.1.value"]),
      ).toBeLessThanOrEqual(1e-4);
      expect(out["attentions.1"]!.dims).toEqual([1, 4, T, T]);
    } finally {
      await session.release();
    }
  });
});
