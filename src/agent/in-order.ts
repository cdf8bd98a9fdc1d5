import { taskYielder } from "../core/next-task.ts";

/**
 * How can a stage keep several model calls in flight and still record its
 * results one by one, in case order? `inOrder` starts up to `concurrency`
 * pieces of work ahead and hands each result to `consume` strictly in the
 * order of `items`, one at a time: what is stored, logged or counted comes
 * out exactly as a plain loop writes it, so a run with several model workers
 * stores the same items in the same order as the CLI's, and a cancelled one
 * keeps exactly the results consumed before it stopped (work started ahead
 * and not yet consumed is dropped, and done again on resume).
 *
 * With `concurrency` 1 it is the plain loop: work i+1 starts after consume i.
 * Every 25 ms it lets the thread's queued tasks in (`taskYielder`): work whose awaits settle at once (a WebAssembly
 * model in the page's worker) would otherwise hold the store's callbacks and a Cancel until the last item.
 *
 * @example
 * const out: number[] = [];
 * await inOrder([3, 1, 2], 2, async (x) => x * 10, async (y) => void out.push(y));
 * out // → [30, 10, 20]
 */
export async function inOrder<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
  consume: (result: R, item: T, index: number) => Promise<void> | void,
): Promise<void> {
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(
      `inOrder(): concurrency must be a whole number ≥ 1 (model calls in flight), got ${concurrency}`,
    );
  const started: Promise<R>[] = [];
  const breathe = taskYielder(25);
  try {
    for (let i = 0; i < items.length; i++) {
      for (let j = started.length; j < Math.min(items.length, i + concurrency); j++) {
        const p = work(items[j]!, j);
        // A failure ahead of the consumer is thrown when its turn comes; until then it must not go unobserved.
        p.catch(() => undefined);
        started[j] = p;
      }
      await consume(await started[i]!, items[i]!, i);
      await breathe();
    }
  } catch (error) {
    // Work started ahead of the failure is let finish (its model calls hold a worker) before the caller goes on.
    await Promise.allSettled(started);
    throw error;
  }
}
