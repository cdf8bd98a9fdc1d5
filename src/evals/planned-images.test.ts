import { describe, expect, it } from "vitest";
import { imageUses, plannedImages, type ReadImage } from "./planned-images.ts";

/** A reader that counts its reads per image; each image is `size` bytes. */
function counting(size = 10) {
  const reads = new Map<string, number>();
  return {
    reads,
    read: (ref: string) => async (): Promise<ReadImage> => {
      reads.set(ref, (reads.get(ref) ?? 0) + 1);
      return new Uint8Array(size);
    },
  };
}

describe("plannedImages", () => {
  it("reads each image once however far apart its trials are, and lets it go after its last trial", async () => {
    // Three splits of 50 images, sorted by id: each image's trials 50 apart (an LRU of 32 read each three times).
    const order = [0, 1, 2].flatMap(() => Array.from({ length: 50 }, (_, i) => `img-${i}`));
    const uses = new Map<string, number>();
    for (const ref of order) uses.set(ref, (uses.get(ref) ?? 0) + 1);
    const images = plannedImages(uses);
    const { reads, read } = counting();
    for (const ref of order) await images.take(ref, read(ref));
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect(reads.size).toBe(50);
    expect(images.held()).toEqual({ images: 0, bytes: 0 });
  });

  it("keeps under its byte budget by letting the least recently used go (read again when asked for)", async () => {
    const uses = new Map([
      ["a", 2],
      ["b", 2],
      ["c", 1],
    ]);
    const images = plannedImages(uses, 15);
    const { reads, read } = counting(10);
    for (const ref of ["a", "b", "c"]) await images.take(ref, read(ref));
    await Promise.resolve();
    // a and b would hold 20 bytes: a (the least recently used) went; c was let go after its only trial.
    expect(images.held()).toEqual({ images: 1, bytes: 10 });
    await images.take("a", read("a"));
    await images.take("b", read("b"));
    expect(reads.get("a")).toBe(2);
    expect(reads.get("b")).toBe(1);
    expect(images.held()).toEqual({ images: 0, bytes: 0 });
  });

  it("reads an image again after a failed read, and one the plan did not count is read and let go", async () => {
    const images = plannedImages(new Map([["x", 2]]));
    let calls = 0;
    const flaky = async (): Promise<ReadImage> => {
      if (++calls === 1) throw new Error("disk hiccup");
      return new Uint8Array(4);
    };
    await expect(images.take("x", flaky)).rejects.toThrow("disk hiccup");
    await expect(images.take("x", flaky)).resolves.toHaveLength(4);
    expect(calls).toBe(2);
    const { reads, read } = counting();
    await images.take("unplanned", read("unplanned"));
    expect(reads.get("unplanned")).toBe(1);
    expect(images.held().images).toBe(0);
  });

  it("refuses a budget that is not a number of bytes", () => {
    expect(() => plannedImages(new Map(), Number.NaN)).toThrow("plannedImages(): budgetBytes must be ≥ 0, got NaN");
  });
});

describe("imageUses", () => {
  it("counts each image's planned calls, skipping calls without one", () => {
    expect(imageUses(["a.png", "b.png", undefined, "a.png"])).toEqual(
      new Map([
        ["a.png", 2],
        ["b.png", 1],
      ]),
    );
    expect(imageUses([])).toEqual(new Map());
  });
});
