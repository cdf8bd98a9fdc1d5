import type { ImageRecord } from "../../../store/types.ts";

/**
 * Object URLs for stored images, made on first sight and revoked when they
 * fall out of use: the case table shows a thumbnail per row, and a 100k-case
 * dataset may name thousands of images, so only the most recently shown
 * `limit` keep a URL (and their decoded bytes); `dispose` revokes the rest.
 *
 * @example const thumbs = new ThumbCache((hash) => store.getImage(hash)); img.src = await thumbs.url("sha256:…")
 */
export class ThumbCache {
  readonly #read: (hash: string) => Promise<ImageRecord | undefined>;
  readonly #limit: number;
  /** In the order last used (a Map keeps insertion order: re-inserting moves an entry to the end). */
  readonly #urls = new Map<string, Promise<string | undefined>>();
  #disposed = false;

  constructor(read: (hash: string) => Promise<ImageRecord | undefined>, limit = 400) {
    this.#read = read;
    this.#limit = limit;
  }

  /** The object URL of stored image `ref` (`sha256:…`), or undefined when it is not stored (or not a stored image). */
  url(ref: string): Promise<string | undefined> {
    if (this.#disposed || !/^sha256:[0-9a-f]{64}$/.test(ref)) return Promise.resolve(undefined);
    let url = this.#urls.get(ref);
    if (url) this.#urls.delete(ref);
    else
      url = this.#read(ref).then(
        (image) =>
          image && !this.#disposed
            ? URL.createObjectURL(new Blob([image.bytes as BlobPart], { type: image.type }))
            : undefined,
        () => undefined,
      );
    this.#urls.set(ref, url);
    while (this.#urls.size > this.#limit) {
      const [oldest, stale] = this.#urls.entries().next().value!;
      this.#urls.delete(oldest);
      void stale.then((u) => u && URL.revokeObjectURL(u));
    }
    return url;
  }

  /** How many images hold a URL now. */
  get size(): number {
    return this.#urls.size;
  }

  /** Revokes every URL (the page is closing). */
  dispose(): void {
    this.#disposed = true;
    for (const url of this.#urls.values()) void url.then((u) => u && URL.revokeObjectURL(u));
    this.#urls.clear();
  }
}
