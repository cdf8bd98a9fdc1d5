import type { CaptureOptions, ModelInput, Reduction, Trace } from "../../core/model.ts";
import { PARITY_REDUCTIONS } from "../demo-run.ts";

/**
 * The capture measured by the benchmark: the parity reductions except the
 * logit lens (a second session, not capture on the same graph).
 */
export const BENCH_REDUCTIONS: readonly Reduction[] = PARITY_REDUCTIONS.filter((r) => r !== "logitLens");

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Times forwards with and without capture on the same inputs, interleaved so
 * both see the same machine state; returns median milliseconds of each.
 */
export async function timeCapture(
  forward: (input: ModelInput, capture: CaptureOptions) => Promise<Trace>,
  inputs: readonly ModelInput[],
  rounds: number,
  reductions: readonly Reduction[] = BENCH_REDUCTIONS,
): Promise<{ plainMs: number; captureMs: number; ratio: number }> {
  const plain: number[] = [];
  const captured: number[] = [];
  for (const input of inputs.slice(0, 2)) {
    await forward(input, {});
    await forward(input, { answer: "yes", reductions });
  }
  for (let r = 0; r < rounds; r++) {
    for (const input of inputs) {
      let t = performance.now();
      await forward(input, { answer: "yes" });
      plain.push(performance.now() - t);
      t = performance.now();
      await forward(input, { answer: "yes", reductions });
      captured.push(performance.now() - t);
    }
  }
  const plainMs = median(plain);
  const captureMs = median(captured);
  return { plainMs, captureMs, ratio: captureMs / plainMs };
}
