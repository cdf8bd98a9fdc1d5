/**
 * A trained head adapter merged into every file of a model folder that holds
 * the head's weight: the head file itself (`lm_head.onnx`, the logit lens) and
 * each decoder's copy (its `logits`), found by value, so generation, forwards
 * and the logit lens all run the new weights and the folder stays an ordinary
 * model folder. Every other file is passed through unchanged.
 */
import type { HeadAdapter } from "./lora-head.ts";
import { headWeightCopies, type HeadProjection } from "./head-features.ts";
import { mergeLora, readInitializer } from "./lora-merge.ts";

/**
 * The folder's files with the adapter merged into each copy of the head's weight (W + s·A·B).
 * `files` maps a path inside the folder (`onnx/lm_head.onnx`) to its bytes; `head` is the head
 * file's path. Throws when no decoder file holds the weight (generation would not change).
 *
 * @example
 * const { files: merged, changed } = mergeHeadFiles(files, "onnx/lm_head.onnx", projection, adapter);
 * changed // ["onnx/decoder_model_merged.onnx: onnx::MatMul_447", "onnx/lm_head.onnx: onnx::MatMul_34", …]
 */
export function mergeHeadFiles(
  files: ReadonlyMap<string, Uint8Array>,
  head: string,
  projection: HeadProjection,
  adapter: HeadAdapter,
): { files: Map<string, Uint8Array>; changed: string[] } {
  const headBytes = files.get(head);
  if (!headBytes) throw new Error(`mergeHeadFiles(): the folder has no '${head}'`);
  const reference = readInitializer(headBytes, projection.weight);
  const out = new Map(files);
  const changed: string[] = [];
  for (const [path, bytes] of files) {
    if (!path.endsWith(".onnx")) continue;
    const names = path === head ? [projection.weight] : headWeightCopies(bytes, reference);
    if (!names.length) continue;
    out.set(
      path,
      mergeLora(
        bytes,
        names.map((weight) => ({ weight, rank: adapter.rank, a: adapter.a, b: adapter.b, scale: adapter.scale })),
      ),
    );
    changed.push(...names.map((n) => `${path}: ${n}`));
  }
  if (!changed.some((c) => !c.startsWith(`${head}:`)))
    throw new Error(
      `mergeHeadFiles(): no decoder file holds the head's weight '${projection.weight}' (${reference.dims.join("×")}); the merged model would generate as before`,
    );
  return { files: out, changed };
}
