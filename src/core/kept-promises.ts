/**
 * Which reads should stay in memory, under a byte budget? A map of pending or
 * settled reads by key, in order of last use: a read counts its bytes once it
 * has arrived, the least recently used go first when the budget is passed, and
 * a read that fails is let go (the next ask reads again). Asks that arrive while
 * a read is pending share it.
 *
 * @example
 * const kept = new KeptPromises((b: Uint8Array) => b.byteLength, 64 * 2 ** 20);
 * const bytes = kept.use("a.png") ?? kept.keep("a.png", read("a.png")); // read once
 * kept.use("a.png"); // → the same promise, now the most recently used
 */
export class KeptPromises<T> {
  /** In order of last use (a Map keeps insertion order: a use moves its key to the end). */
  readonly #kept = new Map<string, { readonly value: Promise<T>; bytes: number }>();
  #bytes = 0;

  constructor(
    private readonly sizeOf: (value: T) => number,
    private readonly maxBytes: number,
  ) {
    if (!(maxBytes >= 0)) throw new RangeError(`KeptPromises: maxBytes must be ≥ 0, got ${maxBytes}`);
  }

  /** The read kept for `key`, made the most recently used; undefined when none is kept. */
  use(key: string): Promise<T> | undefined {
    const entry = this.#kept.get(key);
    if (!entry) return undefined;
    this.#kept.delete(key);
    this.#kept.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` as the read of `key` (replacing one kept) and returns it. */
  keep(key: string, value: Promise<T>): Promise<T> {
    this.drop(key);
    const entry = { value, bytes: 0 };
    this.#kept.set(key, entry);
    value.then(
      (settled) => {
        if (this.#kept.get(key) !== entry) return; // let go before it arrived
        entry.bytes = this.sizeOf(settled);
        this.#bytes += entry.bytes;
        for (const [oldest, e] of this.#kept) {
          if (this.#bytes <= this.maxBytes) break;
          this.#kept.delete(oldest);
          this.#bytes -= e.bytes;
        }
      },
      () => {
        if (this.#kept.get(key) === entry) this.#kept.delete(key);
      },
    );
    return value;
  }

  /** Lets go of the read kept for `key`, if any. */
  drop(key: string): void {
    const entry = this.#kept.get(key);
    if (!entry) return;
    this.#kept.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** Reads kept now, and the bytes of those that have arrived. */
  get held(): { readonly count: number; readonly bytes: number } {
    return { count: this.#kept.size, bytes: this.#bytes };
  }
}
