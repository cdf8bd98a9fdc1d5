import type { ModelSpec } from "../../core/model.ts";
import vlmConfig from "../../../models/tiny-vlm/config.json" with { type: "json" };
import vlmPreprocessor from "../../../models/tiny-vlm/preprocessor_config.json" with { type: "json" };
import vlmProcessor from "../../../models/tiny-vlm/processor_config.json" with { type: "json" };
import lmConfig from "../../../models/tiny-lm/config.json" with { type: "json" };
import { inferSpec } from "./infer.ts";

/**
 * A bundled model's spec: read from the config files the forge ships beside
 * its weights (so a re-forged model never disagrees with its spec), plus what
 * the forge guarantees about the export — attention outputs (unfused, so the
 * bias edit reaches them too), hidden states and an lm_head for the logit
 * lens. A test checks the numbers and capabilities against the ONNX graphs themselves.
 */
function bundled(spec: ModelSpec): ModelSpec {
  return {
    ...spec,
    capabilities: new Set([...spec.capabilities, "attention", "attention_write", "hidden_states"]),
  };
}

/** The models shipped in `models/` (made by `models/forge`). */
export const BUNDLED_SPECS: readonly ModelSpec[] = [
  bundled(inferSpec("tiny-vlm", "models/tiny-vlm", vlmConfig, vlmPreprocessor, vlmProcessor)),
  bundled(inferSpec("tiny-lm", "models/tiny-lm", lmConfig)),
];
