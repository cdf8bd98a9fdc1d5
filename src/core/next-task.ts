/**
 * Letting the event loop in. An `await` on a promise that settles at once (a WebAssembly model's run in a worker,
 * a scripted answer) continues in a microtask, so a loop of such awaits holds every task queued meanwhile —
 * storage callbacks, messages from the page, a Cancel — until the loop ends. These hand the thread back.
 */

/**
 * Resolves in a new task, once the tasks already queued for this thread had their turn (a message to a channel of
 * its own: no 4 ms timer clamp). Works in browsers, workers and Node.
 *
 * @example await nextTask(); // an IndexedDB callback queued before this line has run
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(undefined);
  });
}

/**
 * A pause for a long loop: the function it returns waits for a new task (`pause`, by default `nextTask`) when
 * `budgetMs` or more have passed since the last time it did, and otherwise goes on at once, so the loop gives the
 * thread back a few times a second at the cost of a message each time.
 *
 * @example
 * const breathe = taskYielder(25);
 * for (const item of items) { judge(item); await breathe(); } // a Cancel sent meanwhile is read within ~25 ms
 */
export function taskYielder(
  budgetMs: number,
  now: () => number = () => performance.now(),
  pause: () => Promise<void> = nextTask,
): () => Promise<void> {
  if (!(budgetMs >= 0)) throw new RangeError(`taskYielder(): budgetMs must be a number ≥ 0, got ${budgetMs}`);
  let since = now();
  return async () => {
    if (now() - since < budgetMs) return;
    await pause();
    since = now();
  };
}
