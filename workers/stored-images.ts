/**
 * The bytes of a job's images in the page: a case names its image by content hash (stored in IndexedDB with the
 * dataset) or as a data URL. Both the eval and the investigation jobs read them through `imageReader`.
 */
import { decodeDataUrl } from "../src/datasets/index.ts";
import type { Store } from "../src/store/types.ts";
import { readingAhead } from "./read-ahead.ts";

/**
 * How many stored images are read in one IndexedDB transaction, ahead of the asks (the next batch is started while
 * half of this one is still to be asked for). A transaction per image, eight ahead, waited 108 ms per read on
 * average behind an eval's own writes on 2 cores; 32 encoded images are a few MB at most (a megapixel JPEG is some
 * 300 KB), and each is decoded only when asked for.
 */
export const IMAGES_PER_READ = 32;

/**
 * A reader of the images `refs` names, asked for in that order: the stored ones are read ahead from `store`,
 * `IMAGES_PER_READ` to a transaction; a data URL is decoded when asked for; anything else, or a stored image that
 * is missing, is refused saying how to mend it.
 *
 * @example const read = imageReader(store, cases.flatMap((c) => c.input.image ?? [])); await read("sha256:ab12…")
 */
export function imageReader(store: Store, refs: readonly string[]): (ref: string) => Promise<Uint8Array> {
  const stored = readingAhead(
    [...new Set(refs)].filter((ref) => ref.startsWith("sha256:")),
    (hashes) => store.getImages(hashes),
    IMAGES_PER_READ,
  );
  return async (ref) => {
    if (ref.startsWith("data:")) {
      const decoded = decodeDataUrl(ref);
      if (decoded instanceof Uint8Array) return decoded;
      throw new Error(`image data URL: ${decoded.reason}`);
    }
    if (!ref.startsWith("sha256:"))
      throw new Error(
        `image '${ref}' was not imported with the dataset (the page reads only stored images and data URLs); import the dataset again together with its images`,
      );
    const image = await stored(ref);
    if (!image) throw new Error(`image ${ref} is not in the store; import the dataset again with its images`);
    return image.bytes;
  };
}
