/**
 * Reads kept for the next ask of the same key. A page investigation asks for
 * each image many times (every question about it, every probe, every repair
 * candidate): each ask was an IndexedDB transaction to the browser's storage
 * thread and back, thousands of them in one run, and the model worker waited
 * on each.
 */
import { KeptPromises } from "../src/core/kept-promises.ts";

/**
 * A reader for `read` that keeps what it read, up to `maxBytes` in all
 * (`sizeOf` says how many bytes a value holds; the least recently asked go
 * first), so a key asked again is answered without reading. A read that fails
 * is not kept: the next ask reads again. Asks that arrive while a key is
 * being read share that read.
 *
 * @example
 * const image = keptReads((ref) => store.getImage(ref).then((i) => i!.bytes), (b) => b.byteLength, 64 * 2 ** 20);
 * await image("sha256:ab…"); // read from the store
 * await image("sha256:ab…"); // the same bytes, no read
 */
export function keptReads<T>(
  read: (key: string) => Promise<T>,
  sizeOf: (value: T) => number,
  maxBytes: number,
): (key: string) => Promise<T> {
  const kept = new KeptPromises(sizeOf, maxBytes);
  return (key) => kept.use(key) ?? kept.keep(key, read(key));
}
