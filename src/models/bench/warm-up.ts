/**
 * How long a runtime takes to reach its steady speed. V8 compiles a WebAssembly module in two tiers: Liftoff at
 * once, then TurboFan in the background for the functions that run hot. For ONNX Runtime Web that second tier is
 * seconds of CPU, and until it ends a forward runs partly on baseline code, while the compiler takes CPU from it —
 * a cost of each page load, not of a forward. A benchmark of the steady forward first runs batches until their
 * speed holds still, and says how many it took and what the first batch cost.
 */
import { median } from "./forward-timing.ts";

/** What warming up took: the batches run, and the median of the first and of the last. */
export interface WarmUp {
  readonly batches: number;
  readonly firstMs: number;
  readonly steadyMs: number;
}

/**
 * Runs `batch` (which times some calls and returns their milliseconds) until the medians of the last `window`
 * batches lie within `tolerance` of each other (the slowest at most that much above the fastest), `maxBatches`
 * at most. A batch slowed by the compiler working beside it is not steady, whichever way it moved.
 *
 * @example
 * const warm = await warmUntilSteady(() => timeForwards(10)); // → { batches: 9, firstMs: 6.1, steadyMs: 2.3 }
 */
export async function warmUntilSteady(
  batch: () => Promise<readonly number[]>,
  options: { window?: number; maxBatches?: number; tolerance?: number } = {},
): Promise<WarmUp> {
  const window = options.window ?? 3;
  const maxBatches = options.maxBatches ?? 60;
  const tolerance = options.tolerance ?? 0.05;
  if (!(window >= 1 && maxBatches >= window))
    throw new RangeError(`warmUntilSteady: need 1 ≤ window ≤ maxBatches, got ${window} and ${maxBatches}`);
  if (!(tolerance >= 0)) throw new RangeError(`warmUntilSteady: tolerance must be ≥ 0, got ${tolerance}`);
  const medians: number[] = [];
  while (medians.length < maxBatches) {
    const times = await batch();
    if (!times.length) throw new Error("warmUntilSteady: a batch timed no calls");
    medians.push(median(times));
    const last = medians.slice(-window);
    if (last.length === window && Math.max(...last) <= Math.min(...last) * (1 + tolerance)) break;
  }
  return { batches: medians.length, firstMs: medians[0]!, steadyMs: medians.at(-1)! };
}
