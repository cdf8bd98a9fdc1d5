/**
 * The per-case work of an investigation on the bundled tiny-vlm, in small: a
 * greedy answer (M1 labelling, up to 24 new tokens) then one teacher-forced
 * forward with the probe's reductions (M1 probing), per case; timed in total
 * and per session.
 */
import type { Model, ModelInput } from "../../core/model.ts";
import { BENCH_REDUCTIONS } from "./forward-timing.ts";

/** The workload's wall time split into its two halves, in ms. */
export interface WorkloadTimes {
  readonly generateMs: number;
  readonly forwardMs: number;
}

/** Runs `rounds` rounds over `inputs`: generate, then forward with the answer and the probe's reductions. */
export async function runWorkload(model: Model, inputs: readonly ModelInput[], rounds: number): Promise<WorkloadTimes> {
  let generateMs = 0;
  let forwardMs = 0;
  for (let r = 0; r < rounds; r++)
    for (const input of inputs) {
      let t = performance.now();
      const answer = await model.generate(input, { maxNewTokens: 24 });
      generateMs += performance.now() - t;
      t = performance.now();
      await model.forward(input, { answer: answer || "no", reductions: BENCH_REDUCTIONS });
      forwardMs += performance.now() - t;
    }
  return { generateMs, forwardMs };
}
