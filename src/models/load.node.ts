import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import type { LoadOptions } from "../core/model.ts";
import { loadOrtModel, type OrtModel } from "./ort-model.ts";
import { nodeFiles, nodeSessions } from "./ort-session.node.ts";
import { memoSessions } from "./session-memo.ts";
import { getSpec } from "./specs/index.ts";

/** The repository root (where `models/` lives). */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Options for `loadModel` under Node. */
export interface NodeLoadOptions extends LoadOptions {
  /** Only `ort` (onnxruntime-node) runs white-box under Node. */
  readonly backend?: "ort";
  /**
   * Answer a session run that repeats an earlier one's feeds from memory (`memoSessions`), as the page's model
   * worker does for jobs: an investigation runs the vision encoder once per image instead of once per call.
   */
  readonly memo?: boolean;
}

/**
 * Loads a bundled model by key (`"tiny-vlm"`, `"tiny-lm"`) or any model
 * folder in transformers.js's ONNX layout by path, on onnxruntime-node.
 *
 * @example
 * const model = await loadModel("tiny-vlm");
 * await model.generate({ prompt: "<image> is there a red circle ?", image: png }) // → "yes"
 * const trace = await model.forward(input, { answer: "yes", reductions: ["imageAttentionShare"] });
 */
export async function loadModel(pathOrKey: string, options: NodeLoadOptions = {}): Promise<OrtModel> {
  if (options.backend && options.backend !== "ort")
    throw new Error(`loadModel: backend '${options.backend as string}' is not available under Node; use 'ort'`);
  const spec = getSpec(pathOrKey);
  const folder = spec ? resolve(REPO_ROOT, spec.source) : resolve(pathOrKey);
  if (!existsSync(folder))
    throw new Error(`loadModel: '${pathOrKey}' is neither a bundled model key nor an existing folder`);
  const { memo, ...load } = options;
  return loadOrtModel(nodeFiles(folder), memo ? memoSessions(nodeSessions) : nodeSessions, {
    ...load,
    ...(spec ? { spec } : {}),
    key: spec?.key ?? pathOrKey,
    source: spec?.source ?? folder,
  });
}
