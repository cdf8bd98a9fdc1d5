/**
 * The layout parts of `npm run bench:runtime`, ratios measured side by side:
 *  4. a merged decoder (`If` on use_cache_branch) with its branches tapped:
 *     forward with attention reductions vs the same forward without. Target ≤ 1.15×.
 *  5. a GroupQueryAttention decoder decomposed into standard ops vs the fused
 *     kernel, prompt forward and one cached decoding step. Target ≤ 1.3×.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gqaDecoder, type GqaDecoderOptions } from "../fixtures/gqa-decoder.ts";
import { mergeAsIf } from "../fixtures/merge-if.ts";
import { loadModel, REPO_ROOT } from "../load.node.ts";
import { nodeSessions } from "../ort-session.node.ts";
import { prepareAttention } from "../prepare-attention.ts";
import { f32, i64, type PlainTensor, type Session } from "../session.ts";
import { BENCH_REDUCTIONS, median, timeCapture } from "./forward-timing.ts";

const fmt = (x: number, digits = 2) => x.toFixed(digits);
/** The benchmark's reductions that a text-only model gives (no image grid). */
const TEXT_REDUCTIONS = BENCH_REDUCTIONS.filter((r) => !/^image|^rollout$/.test(r));

/** 4. The tap on a merged decoder: tiny-lm's graph as both branches of an If, loaded from a folder holding only it. */
export async function benchMergedTap(report: (line: string) => void, prompts: readonly string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-bench-merged-"));
  try {
    const folder = join(dir, "merged-lm");
    cpSync(`${REPO_ROOT}models/tiny-lm`, folder, { recursive: true });
    for (const f of ["model.onnx", "model_untapped.onnx", "lm_head.onnx"]) rmSync(join(folder, "onnx", f));
    const untapped = new Uint8Array(readFileSync(`${REPO_ROOT}models/tiny-lm/onnx/model_untapped.onnx`));
    writeFileSync(join(folder, "onnx/decoder_model_merged.onnx"), mergeAsIf(untapped));
    const model = await loadModel(folder);
    try {
      const where = [...new Set(model.attentionStatus.sites.flatMap((s) => s.places.map((p) => p.where)))].join("; ");
      const t = await timeCapture(
        (input, capture) => model.forward(input, capture),
        prompts.map((prompt) => ({ prompt })),
        5,
        TEXT_REDUCTIONS,
      );
      report(
        `merged decoder (tiny-lm as If branches, tapped in ${where}): forward with attention ${fmt(t.captureMs)} ms vs without ${fmt(t.plainMs)} ms → ${fmt(t.ratio)}× (target ≤ 1.15×; reductions: ${TEXT_REDUCTIONS.join(", ")})`,
      );
    } finally {
      await model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a decoder session on `S` new tokens over a past of `P`, returning the feeds used. */
function gqaFeeds(o: GqaDecoderOptions, S: number, P: number): Record<string, PlainTensor> {
  const head = o.hidden / o.heads;
  const feeds: Record<string, PlainTensor> = {
    input_ids: i64(
      Array.from({ length: S }, (_, i) => (i * 7 + 3) % o.vocab),
      [1, S],
    ),
    attention_mask: i64(new Array<number>(P + S).fill(1), [1, P + S]),
  };
  for (let l = 0; l < o.layers; l++)
    for (const kv of ["key", "value"])
      feeds[`past_key_values.${l}.${kv}`] = f32(
        Float32Array.from({ length: o.kvHeads * P * head }, (_, i) => Math.sin(i * 0.01 + l)),
        [1, o.kvHeads, P, head],
      );
  return feeds;
}

/**
 * Each session on the same feeds, in A-B-B-A rounds so both see the same
 * machine state (and each runs first as often): median milliseconds of each,
 * and their ratio b/a.
 */
async function interleaved(a: Session, b: Session, feeds: Record<string, PlainTensor>, rounds: number) {
  const time = async (s: Session) => {
    const t = performance.now();
    await s.run(feeds, ["logits"]);
    return performance.now() - t;
  };
  for (let i = 0; i < 3; i++) await Promise.all([a.run(feeds, ["logits"]), b.run(feeds, ["logits"])]);
  const ta: number[] = [];
  const tb: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const a1 = await time(a);
    const b1 = await time(b);
    const b2 = await time(b);
    const a2 = await time(a);
    ta.push(a1, a2);
    tb.push(b1, b2);
  }
  return { a: median(ta), b: median(tb), ratio: median(tb) / median(ta) };
}

/** 5. A decomposed GroupQueryAttention decoder against ONNX Runtime's fused kernel, at two widths. */
export async function benchDecomposedGqa(report: (line: string) => void): Promise<void> {
  const configs: [string, GqaDecoderOptions][] = [
    // SmolLM-135M's widths (hidden 576, 9 query heads over 3 KV heads of 64), fewer layers, a smaller vocabulary.
    ["SmolLM-135M widths", { layers: 4, hidden: 576, heads: 9, kvHeads: 3, vocab: 8192, maxPositions: 512 }],
    // Tiny widths, where the decomposition's extra small ops weigh most.
    ["tiny widths", { layers: 4, hidden: 256, heads: 8, kvHeads: 2, vocab: 2048, maxPositions: 512 }],
  ];
  for (const [label, o] of configs) {
    const fusedBytes = gqaDecoder(o);
    const prepared = prepareAttention(fusedBytes, { heads: o.heads, layers: o.layers });
    const [fused, decomposed] = await Promise.all([
      nodeSessions(fusedBytes, { name: "gqa fused" }),
      nodeSessions(prepared.bytes, { name: "gqa decomposed" }),
    ]);
    try {
      const sizes = `${label}: ${o.layers} layers, hidden ${o.hidden}, ${o.heads} query heads over ${o.kvHeads} KV heads, rotary, vocabulary ${o.vocab}`;
      const prompt = await interleaved(fused, decomposed, gqaFeeds(o, 64, 0), 15);
      report(
        `decomposed GroupQueryAttention decoder (${sizes}), 64-token prompt: ${fmt(prompt.b)} ms vs the fused kernel ${fmt(prompt.a)} ms → ${fmt(prompt.ratio)}× (target ≤ 1.3×)`,
      );
      const step = await interleaved(fused, decomposed, gqaFeeds(o, 1, 128), 40);
      report(
        `decomposed GroupQueryAttention decoder (${label}), one cached step over 128 keys: ${fmt(step.b)} ms vs the fused kernel ${fmt(step.a)} ms → ${fmt(step.ratio)}× (target ≤ 1.3×)`,
      );
    } finally {
      await Promise.all([fused.release(), decomposed.release()]);
    }
  }
}
