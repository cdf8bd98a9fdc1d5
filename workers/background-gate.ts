/**
 * Keeps background work (the engine check) and the work the page asked for
 * (loads, answers, jobs) in one worker from ever running at the same time,
 * the page's work first. Background work runs in steps: a step starts only
 * while no asked-for work is in flight, and asked-for work that arrives
 * during a step waits for that step to end (it never waits for the whole
 * background task). The engine check needs both halves: its timed forwards
 * must not measure a load beside them, and ONNX Runtime's WebGPU build,
 * which transformers.js shares, refuses to initialise two of its backends
 * at once ("multiple calls to 'initWasm()' detected": a first-visit hub load
 * beside the check failed, and its backend stayed broken) and cannot run two
 * asyncify calls at once.
 *
 * @example
 * const gate = new BackgroundGate();
 * void gate.step(() => forward(reference)); // runs now: nothing else is in flight
 * await gate.work(() => load(model)); // starts once that forward has ended; steps wait until it is done
 */
export class BackgroundGate {
  #working = 0;
  #step: Promise<unknown> | undefined;
  #idle: (() => void)[] = [];

  /** True while asked-for work is in flight (a background step would wait). */
  get busy(): boolean {
    return this.#working > 0;
  }

  /** Runs asked-for work: after the background step in flight, if any; no step starts until it settles. */
  async work<T>(fn: () => Promise<T>): Promise<T> {
    this.#working++;
    try {
      // Counted before waiting, so that no new step starts meanwhile; the step's own failure is not ours.
      await this.#step?.catch(() => undefined);
      return await fn();
    } finally {
      if (--this.#working === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /** Runs one step of background work once no asked-for work is in flight (and no other step is). */
  async step<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#working > 0 || this.#step)
      await (this.#working > 0
        ? new Promise<void>((resolve) => this.#idle.push(resolve))
        : this.#step!.catch(() => undefined));
    const run = fn();
    this.#step = run;
    try {
      return await run;
    } finally {
      if (this.#step === run) this.#step = undefined;
    }
  }
}
