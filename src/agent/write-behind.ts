/**
 * Writes that do not hold up the work producing them. M1's probing stored
 * each case's record (a packed trace) before the next forward began; in the
 * page every store append is a round trip to the browser's storage thread,
 * and the model worker sat idle through 600 of them.
 */

/** What `writeBehind` returns: `push` queues a value (throwing the first failed write), `flush` waits for all. */
export interface WriteBehind<T> {
  push(value: T): void;
  flush(): Promise<void>;
}

/**
 * A queue in front of `write`: pushed values are written in push order, in
 * batches — one `write` at a time, taking every value pushed while the
 * previous one ran — so the caller goes on at once. A write that fails stops
 * the queue: the next `push` or `flush` throws its error, and nothing after
 * it is written (what was written before stays).
 *
 * @example
 * const queue = writeBehind((records) => store.appendItems(run, records));
 * for (const c of cases) queue.push(await probe(c)); // the next probe starts while the last record is written
 * await queue.flush();
 */
export function writeBehind<T>(write: (batch: T[]) => Promise<void>): WriteBehind<T> {
  let queued: T[] = [];
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  const drain = async () => {
    try {
      while (queued.length && !failure) {
        const batch = queued;
        queued = [];
        await write(batch);
      }
    } catch (error) {
      failure = { error };
    } finally {
      running = undefined;
    }
  };
  /** Throws the failed write's error, if one failed (read fresh each time: a write may fail while awaited). */
  const check = () => {
    if (failure) throw failure.error;
  };
  return {
    push(value) {
      check();
      queued.push(value);
      running ??= drain();
    },
    async flush() {
      while (running) await running;
      check();
      if (queued.length) await (running = drain());
      check();
    },
  };
}
