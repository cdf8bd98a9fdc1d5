/**
 * What a job tells the page while it runs, at most once every `everyMs`: the first value at once, a value inside
 * the window since the last one once the window has passed, so the last value of a burst reaches the page too. A
 * plain "at most every" dropped what came inside the window until the next value came, and at the end of a batch
 * of writes that could be seconds: the page showed 378 judged trials beside a summary of 404.
 */

/** The clock and timer `latestEvery` runs on (the thread's own by default; a test's moved by hand). */
export interface Timers {
  readonly now: () => number;
  readonly setTimeout: (fn: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
}

const THREAD_TIMERS: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The sender `latestEvery` returns. */
export interface LatestEvery<T> {
  /** A new value: sent now when the window has passed (or `now` is true), else kept and sent when it has. */
  push(value: T, now?: boolean): void;
  /** Drops the value kept, if any, and its timer: nothing is sent after this (the job has ended). */
  stop(): void;
}

/**
 * Sends the latest of a stream of values through `send`, at most once every `everyMs`, never holding the last one
 * back longer than that.
 *
 * @example
 * const progress = latestEvery(250, (p) => onProgress(p));
 * progress.push({ done: 1 }); // sent now
 * progress.push({ done: 2 }); progress.push({ done: 3 }); // { done: 3 } sent 250 ms after the first; 2 never
 */
export function latestEvery<T>(
  everyMs: number,
  send: (value: T) => void,
  timers: Timers = THREAD_TIMERS,
): LatestEvery<T> {
  if (!(everyMs >= 0)) throw new RangeError(`latestEvery(): everyMs must be a number ≥ 0, got ${everyMs}`);
  let last = -Infinity;
  let kept: { value: T } | undefined;
  let timer: unknown;
  let timing = false;
  const cancelTimer = () => {
    if (timing) timers.clearTimeout(timer);
    timing = false;
  };
  const flush = () => {
    cancelTimer();
    if (!kept) return;
    const { value } = kept;
    kept = undefined;
    last = timers.now();
    send(value);
  };
  return {
    push(value, now = false) {
      kept = { value };
      const wait = everyMs - (timers.now() - last);
      if (now || wait <= 0) return flush();
      if (!timing) {
        timing = true;
        timer = timers.setTimeout(flush, wait);
      }
    },
    stop() {
      cancelTimer();
      kept = undefined;
    },
  };
}
