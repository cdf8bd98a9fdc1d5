/**
 * The ends of eval runs being recorded behind the work that follows them
 * (`runEval`'s `closeBehind`): M5 judges its next repair candidate while the
 * last one's summary and finished status are written. Nothing is lost if the
 * process dies meanwhile: a resumed investigation finds that run unfinished,
 * with every item stored, and only records its end.
 */
export class ClosesBehind {
  #pending: Promise<void>[] = [];
  #failure: { readonly error: unknown } | undefined;

  /** Takes one run's `closed` promise; its failure is kept (never left unhandled) for `check` to throw. */
  add(closed: Promise<void>): void {
    this.#pending.push(
      closed.then(
        () => undefined,
        (error: unknown) => {
          this.#failure ??= { error };
        },
      ),
    );
  }

  /**
   * Throws the first failed close, if one failed so far: a loop calls it before each run, so a store that fails
   * stops the work at the next run rather than at the end.
   *
   * @example
   * const closes = new ClosesBehind();
   * closes.add(Promise.reject(new Error("disk full")));
   * await closes.settled();
   * closes.check(); // throws Error("disk full")
   */
  check(): void {
    if (this.#failure) throw this.#failure.error;
  }

  /**
   * Runs `work`, then waits for every close taken meanwhile, also when `work` threw (its error wins), and throws
   * the first close that failed: the work's end is the end of everything it wrote.
   */
  async around<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } finally {
      await this.settled();
    }
    this.check();
    return result;
  }

  /** Resolves once every close taken so far has settled, failed or not (`check` says whether one failed). */
  async settled(): Promise<void> {
    while (this.#pending.length) {
      const pending = this.#pending;
      this.#pending = [];
      await Promise.all(pending);
    }
  }
}
