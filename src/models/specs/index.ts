import type { ModelSpec } from "../../core/model.ts";
import { BUNDLED_SPECS } from "./bundled.ts";

export { inferSpec, textConfig, onnxFiles, isImageModel, type TextConfig } from "./infer.ts";
export { BUNDLED_SPECS } from "./bundled.ts";

/**
 * The registered model specs (the bundled models).
 *
 * @example
 * listSpecs().map((s) => s.key) // → ["tiny-vlm", "tiny-lm"]
 */
export function listSpecs(): readonly ModelSpec[] {
  return BUNDLED_SPECS;
}

/**
 * The registered spec for `key`, or undefined for an unregistered folder or
 * hub id (infer one from its config.json with `inferSpec`).
 *
 * @example
 * getSpec("tiny-vlm")?.image?.grid // → [6, 6]
 */
export function getSpec(key: string): ModelSpec | undefined {
  return BUNDLED_SPECS.find((s) => s.key === key);
}
