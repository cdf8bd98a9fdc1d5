/**
 * Trained last-layer adapters merged into every file of a model folder that
 * holds the weights they adapt: the tapped decoder they were read from, its
 * untapped twin (generation) and, for the head, `lm_head.onnx` (the logit
 * lens) — each copy found by value, as the head merge does, since exporters
 * name the same weight differently in each file. The folder stays an ordinary
 * model folder that every backend loads.
 */
import type { LayerAdapter } from "./last-layer.ts";
import { headWeightCopies } from "./head-features.ts";
import type { LastLayer } from "./layer-weights.ts";
import { mergeLora, readInitializer } from "./lora-merge.ts";

/**
 * The folder's files with each adapter merged (W + s·A·B) into every copy of its weight. Throws, naming the
 * projection, when an adapter's weight is not in the decoder it was read from.
 *
 * @example
 * const { files: merged, changed } = mergeLayerFiles(files, last, fit.adapters);
 * changed // ["onnx/decoder_model_merged.onnx: onnx::MatMul_426", "onnx/decoder_untapped.onnx: …", …]
 */
export function mergeLayerFiles(
  files: ReadonlyMap<string, Uint8Array>,
  last: LastLayer,
  adapters: readonly LayerAdapter[],
): { files: Map<string, Uint8Array>; changed: string[] } {
  const decoder = files.get(last.decoder);
  if (!decoder) throw new Error(`mergeLayerFiles(): the folder has no '${last.decoder}'`);
  const references = adapters.map((a) => ({ adapter: a, ...readInitializer(decoder, last.names[a.target]) }));
  const out = new Map(files);
  const changed: string[] = [];
  for (const [path, bytes] of files) {
    if (!path.endsWith(".onnx")) continue;
    const merges = references.flatMap(({ adapter, dims, values }) =>
      headWeightCopies(bytes, { dims, values }).map((weight) => ({
        weight,
        rank: adapter.rank,
        a: adapter.a,
        b: adapter.b,
        scale: adapter.scale,
      })),
    );
    if (!merges.length) continue;
    out.set(path, mergeLora(bytes, merges));
    changed.push(...merges.map((m) => `${path}: ${m.weight}`));
  }
  for (const a of adapters)
    if (!changed.includes(`${last.decoder}: ${last.names[a.target]}`))
      throw new Error(`mergeLayerFiles(): the '${a.target}' adapter's weight was not found in ${last.decoder}`);
  return { files: out, changed };
}
