import type { ImagePixels } from "../core/model.ts";

/**
 * The model inputs already made from an image, kept by the image's content:
 * an investigation hands the model the same image many times (each of its
 * questions, each probe, each repair candidate), and turning a PNG into
 * `pixel_values` each time (inflate, unfilter, resize, normalise) was about a
 * tenth of a page investigation's CPU — most of it allocating fresh typed
 * arrays, which costs far more in a browser than in Node.
 *
 * A hit is exact: the image's bytes (or its pixels and size) are compared in
 * full, never trusted to a hash alone. What `make` returns is shared by every
 * hit, so it must not be written into.
 *
 * @example
 * const cache = new PixelCache(32 * 2 ** 20);
 * const a = cache.get(png, () => pixelValues(toRgb(png), processing));
 * cache.get(png.slice(), () => { throw new Error("not called: same bytes") }) === a // → true
 */
export class PixelCache {
  private readonly kept = new Map<string, { source: Uint8Array; size: string; value: Float32Array }>();
  private bytes = 0;

  /** `maxBytes`: the kept images and their inputs together, least recently used first out. */
  constructor(private readonly maxBytes: number) {
    if (!(maxBytes >= 0)) throw new RangeError(`PixelCache: maxBytes must be ≥ 0, got ${maxBytes}`);
  }

  /** The input made from `image`, made with `make` the first time this content is seen. */
  get(image: Uint8Array | ImagePixels, make: () => Float32Array): Float32Array {
    const source = image instanceof Uint8Array ? image : image.data;
    const size = image instanceof Uint8Array ? "bytes" : `${image.width}x${image.height}`;
    const key = `${size}|${source.length}|${contentHash(source)}`;
    const found = this.kept.get(key);
    if (found && found.size === size && sameBytes(found.source, source)) {
      this.kept.delete(key);
      this.kept.set(key, found);
      return found.value;
    }
    const value = make();
    const entryBytes = source.byteLength + value.byteLength;
    if (entryBytes > this.maxBytes) return value;
    if (found) {
      this.kept.delete(key);
      this.bytes -= found.source.byteLength + found.value.byteLength;
    }
    this.kept.set(key, { source: Uint8Array.from(source), size, value });
    this.bytes += entryBytes;
    for (const [oldest, e] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= e.source.byteLength + e.value.byteLength;
    }
    return value;
  }

  /** How many images are kept. */
  get size(): number {
    return this.kept.size;
  }
}

/** A 32-bit FNV-1a over every byte (the key narrows the search; `sameBytes` decides). */
function contentHash(bytes: Uint8Array | Uint8ClampedArray): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return (h >>> 0).toString(36);
}

function sameBytes(a: Uint8Array, b: Uint8Array | Uint8ClampedArray): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
