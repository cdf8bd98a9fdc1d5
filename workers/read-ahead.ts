/**
 * Reads that are started before they are asked for. In the page's eval the
 * model waits on every image it reads from IndexedDB: the read goes to the
 * browser's storage thread and back, several milliseconds on a busy machine,
 * and the worker is idle meanwhile (100 such waits were 12% of a 600-case
 * eval's wall time). The trials ask for their images in the order of the
 * cases, so the next few can be read while the model works on this one.
 */

/**
 * A reader for `read` that, asked for a key of `order`, also starts reading
 * the next `ahead` keys of `order`, so that they are ready (or under way)
 * when asked for. Each key read ahead is handed out once, to the first ask;
 * a key asked again, or one not in `order`, is read when asked. A read ahead
 * that fails fails its ask, not before (and is not reported as unhandled
 * when nobody asks). At most `ahead` results are held unasked.
 *
 * @example
 * const image = readingAhead(["a.png", "b.png", "c.png"], (ref) => store.getImage(ref), 2);
 * await image("a.png"); // reads a.png; b.png and c.png are under way meanwhile
 * await image("b.png"); // already read: no wait on the store
 */
export function readingAhead<T>(
  order: readonly string[],
  read: (key: string) => Promise<T>,
  ahead = 4,
): (key: string) => Promise<T> {
  if (!Number.isInteger(ahead) || ahead < 0)
    throw new RangeError(`readingAhead(): ahead must be a whole number ≥ 0, got ${ahead}`);
  const position = new Map<string, number>();
  order.forEach((key, i) => {
    if (!position.has(key)) position.set(key, i);
  });
  const started = new Map<string, Promise<T>>();
  /** The first position of `order` not yet read ahead. */
  let next = 0;
  return (key) => {
    const ready = started.get(key);
    started.delete(key);
    const asked = ready ?? read(key);
    const at = position.get(key);
    if (at === undefined) return asked;
    // Results read ahead but passed over are dropped (a re-ask reads again), so what is held stays within `ahead`.
    for (const [held] of started) if (position.get(held)! < at) started.delete(held);
    // Keys before the one asked for were passed over (a resumed run skips what it judged): never read them ahead.
    next = Math.max(next, at + 1);
    for (; next <= at + ahead && next < order.length; next++) {
      const upcoming = order[next]!;
      if (started.has(upcoming)) continue;
      const pending = read(upcoming);
      pending.catch(() => undefined);
      started.set(upcoming, pending);
    }
    return asked;
  };
}
