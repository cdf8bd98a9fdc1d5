/**
 * Work cut into slices of a time budget: as much of it per task (or per frame) as fits in `budgetMs`, so a long
 * report neither holds the main thread in one long task nor waits a task or a frame per piece. On a loaded
 * machine each wait for the next task or frame costs tens of ms of wall time, whatever the work: a report of 14
 * sections built one per task and shown one per frame waited 28 times.
 */

export { nextTask } from "../../../core/next-task.ts";

/**
 * Runs `steps` in order and returns their results, pausing (`pause`, a new task) before the first and whenever
 * the steps since the last pause have taken `budgetMs` or more; returns undefined as soon as `wanted()` turns
 * false after a pause (a newer build replaced this one).
 *
 * @example await inSlices([() => 1, () => 2], 8, nextTask) // [1, 2], built in one task when both take < 8 ms
 */
export async function inSlices<T>(
  steps: readonly (() => T)[],
  budgetMs: number,
  pause: () => Promise<void>,
  wanted: () => boolean = () => true,
  now: () => number = () => performance.now(),
): Promise<T[] | undefined> {
  if (!(budgetMs > 0)) throw new Error(`inSlices: budgetMs must be a positive number of ms (got ${budgetMs})`);
  const out: T[] = [];
  let sliceStart = Number.NEGATIVE_INFINITY;
  for (const step of steps) {
    if (now() - sliceStart >= budgetMs) {
      await pause();
      if (!wanted()) return undefined;
      sliceStart = now();
    }
    out.push(step());
  }
  return out;
}

/**
 * How far to reveal a list in this frame: from `shown` on, one more item at a time (`reveal(n)` puts the first `n`
 * on screen, synchronously) while the frame's reveals took less than `budgetMs`; at least one more. Returns the
 * new count.
 *
 * @example revealWithin(1, 14, 10, (n) => { shown = n; flushSync(); }) // 14 when the 13 sections take < 10 ms
 */
export function revealWithin(
  shown: number,
  total: number,
  budgetMs: number,
  reveal: (n: number) => void,
  now: () => number = () => performance.now(),
): number {
  if (!(budgetMs > 0)) throw new Error(`revealWithin: budgetMs must be a positive number of ms (got ${budgetMs})`);
  const t0 = now();
  let n = shown;
  while (n < total) {
    n += 1;
    reveal(n);
    if (now() - t0 >= budgetMs) break;
  }
  return n;
}
