import { KeptPromises, type ImagePixels } from "../core/index.ts";

/** What an image reader gives: the file's bytes, or pixels already decoded. */
export type ReadImage = Uint8Array | ImagePixels;

/** The images an eval keeps read: `take` one for a trial; each is read once while trials still need it. */
export interface PlannedImages {
  /** The image `ref` for one of its planned trials (read with `read` the first time, or again after an eviction). */
  take(ref: string, read: () => Promise<ReadImage>): Promise<ReadImage>;
  /** Images held now, and their bytes (for tests and benchmarks). */
  readonly held: () => { readonly images: number; readonly bytes: number };
}

/** The bytes an image holds in memory. */
const sizeOf = (image: ReadImage): number => (image instanceof Uint8Array ? image : image.data).byteLength;

/**
 * How many times each image is asked for, from the image of each planned call in order (a call without one
 * gives `undefined`): what `plannedImages` is given.
 *
 * @example imageUses(["a.png", "b.png", undefined, "a.png"]) // → Map { "a.png" → 2, "b.png" → 1 }
 */
export function imageUses(refs: Iterable<string | undefined>): Map<string, number> {
  const uses = new Map<string, number>();
  for (const ref of refs) if (ref !== undefined) uses.set(ref, (uses.get(ref) ?? 0) + 1);
  return uses;
}

/**
 * Which images should an eval keep in memory, when it knows its whole plan?
 * Each image is kept from its first trial until its last one (`uses` counts
 * the trials that will ask for it), so however the plan orders the cases an
 * image is read and decoded once, and let go as soon as no trial needs it.
 * Under `budgetBytes` of held images; over it, the least recently used are
 * let go first (and read again if a trial asks for them later). A dataset
 * sorted by id puts POPE's three splits of one image 200 cases apart, and a
 * least-recently-used cache of 32 images read each image three times.
 *
 * @example
 *   const images = plannedImages(new Map([["a.png", 3]]));
 *   await images.take("a.png", read); // read once here …
 *   await images.take("a.png", read); // … answered from memory twice, then let go
 */
export function plannedImages(uses: ReadonlyMap<string, number>, budgetBytes = 256 * 2 ** 20): PlannedImages {
  if (!(budgetBytes >= 0)) throw new RangeError(`plannedImages(): budgetBytes must be ≥ 0, got ${budgetBytes}`);
  const left = new Map(uses);
  const kept = new KeptPromises(sizeOf, budgetBytes);
  return {
    take(ref, read) {
      const remaining = (left.get(ref) ?? 1) - 1;
      if (remaining > 0) left.set(ref, remaining);
      else left.delete(ref);
      const image = kept.use(ref) ?? kept.keep(ref, read());
      // Its last planned trial: let it go (a failed read is tried again by the next trial, if any).
      if (remaining <= 0) kept.drop(ref);
      return image;
    },
    held: () => ({ images: kept.held.count, bytes: kept.held.bytes }),
  };
}
