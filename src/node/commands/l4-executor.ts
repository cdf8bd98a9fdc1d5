/**
 * `investigate --max-tier L4` under Node: the L4 executor (LoRA adapters) when the
 * model is small enough to train here (its parameters from the spec, the head
 * file and hidden states present), else nothing — the recipe alone is written.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { nodeHeadAdapter } from "../../agent/l4/executor.node.ts";
import { TRAIN_HERE_MAX_PARAMETERS, type HeadAdapterCandidate, type L4Pool } from "../../agent/l4/executor.ts";
import { approxParameters } from "../../agent/l4/recipe.ts";
import type { FailureCase, ImagePixels, Model } from "../../core/index.ts";
import { REPO_ROOT } from "../../models/load.node.ts";

export { TRAIN_HERE_MAX_PARAMETERS };

/**
 * The L4 executor for `model` whose weights are the folder `weights`, writing merged models to `<out>/l4/`,
 * or a reason it is not run here.
 */
export function cliL4Executor(
  model: Model,
  weights: string,
  out: string,
  o: {
    readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
    readonly say: (line: string) => void;
    readonly signal?: AbortSignal;
  },
):
  | {
      readonly executor: (pool: L4Pool) => HeadAdapterCandidate;
      /** The merged model folders written so far. */
      readonly written: () => string[];
      /** Why training failed, per executor that failed. */
      readonly failures: () => string[];
      readonly dispose: () => Promise<void>;
    }
  | { readonly reason: string } {
  const folder = resolve(REPO_ROOT, weights);
  const params = approxParameters(model.spec);
  if (params > TRAIN_HERE_MAX_PARAMETERS)
    return {
      reason: `${model.spec.key} has ~${params.toExponential(2)} parameters, over the ${TRAIN_HERE_MAX_PARAMETERS.toExponential(0)} trained here: L4 writes the recipe only`,
    };
  if (!model.capabilities.has("hidden_states") || !existsSync(join(folder, "onnx/lm_head.onnx")))
    return {
      reason: `${model.spec.key} gives no hidden states with a head file (onnx/lm_head.onnx in ${folder}): the L4 adapters cannot be trained; L4 writes the recipe only`,
    };
  const made: HeadAdapterCandidate[] = [];
  return {
    executor: (pool) => {
      const candidate = nodeHeadAdapter({
        ...pool,
        folder,
        out: join(out, "l4"),
        images: o.images,
        onCase: (done, total) => {
          if (done === 1 || done % 100 === 0 || done === total) o.say(`L4 features  ${done}/${total} pool cases read`);
        },
        onStep: (s) => {
          if (s.step % 50 === 0 || s.step === s.steps)
            o.say(`L4 train     step ${s.step}/${s.steps}  loss ${s.loss.toFixed(4)}`);
        },
        ...(o.signal ? { signal: o.signal } : {}),
      });
      made.push(candidate);
      return candidate;
    },
    written: () =>
      made.flatMap((c) => {
        const t = c.training();
        return t && "weights" in t ? [t.weights] : [];
      }),
    failures: () => made.flatMap((c) => c.failure() ?? []),
    dispose: async () => {
      await Promise.all(made.map((c) => c.dispose()));
    },
  };
}
