/**
 * Reads that are started before they are asked for, several in one go. In
 * the page's eval the model waits on every image it reads from IndexedDB:
 * the read goes to the browser's storage thread and back. One transaction
 * per image, even eight ahead of the trial that asks, waited 108 ms per read
 * on average in a 600-case eval on 2 cores (behind the eval's own writes),
 * 0.3 s of a 2.4 s eval spent waiting; the 100 images read in one
 * transaction took 22 ms. The trials ask for their images in the order of
 * the cases, so the next ones can be read together while the model works.
 */

/**
 * A reader for `readMany` that, asked for a key of `order`, reads the keys
 * from it onwards in batches of `batch` (one `readMany` call each, its
 * answers in the order of the keys it was given), starting the next batch
 * while half of the current one is still to be asked for. Each key read ahead
 * is handed out once, to the first ask; a key asked again, or one not in
 * `order`, is read alone when asked. Keys before the first one asked are
 * never read (a resumed run skips what it judged), and keys passed over are
 * let go, so at most about a batch and a half of answers is held unasked. A
 * batch that fails fails the asks of its keys, not before (and is not
 * reported as unhandled when nobody asks).
 *
 * @example
 * const image = readingAhead(refs, (some) => store.getImages(some), 32);
 * await image(refs[0]); // reads refs[0..31] in one transaction
 * await image(refs[1]); // already read: no wait on the store
 */
export function readingAhead<T>(
  order: readonly string[],
  readMany: (keys: readonly string[]) => Promise<readonly T[]>,
  batch = 16,
): (key: string) => Promise<T> {
  if (!Number.isInteger(batch) || batch < 1)
    throw new RangeError(`readingAhead(): batch must be a whole number ≥ 1, got ${batch}`);
  const position = new Map<string, number>();
  order.forEach((key, i) => {
    if (!position.has(key)) position.set(key, i);
  });
  const readOne = async (key: string): Promise<T> => {
    const [value] = await readMany([key]);
    return value as T;
  };
  const held = new Map<string, Promise<T>>();
  /** The first position of `order` not yet read. */
  let next = 0;
  return (key) => {
    const at = position.get(key);
    if (at === undefined) return readOne(key);
    for (const [kept] of held) if (position.get(kept)! < at) held.delete(kept);
    // Keys before the one asked for were passed over: never read them ahead.
    next = Math.max(next, at);
    if (next - at <= batch / 2 && next < order.length) {
      const keys = [...new Set(order.slice(next, next + batch))].filter((k) => position.get(k)! >= next);
      next += batch;
      const answers = readMany(keys);
      keys.forEach((k, i) => {
        const one = answers.then((values) => values[i] as T);
        one.catch(() => undefined);
        held.set(k, one);
      });
    }
    const ready = held.get(key);
    held.delete(key);
    return ready ?? readOne(key);
  };
}
