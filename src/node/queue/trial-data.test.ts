import { describe, expect, it } from "vitest";
import { batchJobId, decodeImage, encodeImage, imageKey, imageRedisKey } from "./trial-data.ts";

describe("batchJobId", () => {
  const a = { caseId: "pope-random-0001", repeat: 0 };
  const b = { caseId: "pope-random-0002", repeat: 1 };
  const c = { caseId: "pope:odd/id", repeat: 0 };

  it("names the same trials of a run the same way, and any other set otherwise", () => {
    expect(batchJobId("run-1", [a, b])).toBe(batchJobId("run-1", [a, b]));
    expect(batchJobId("run-1", [a, b])).not.toBe(batchJobId("run-1", [a, c]));
    expect(batchJobId("run-1", [a, b])).not.toBe(batchJobId("run-1", [a]));
    expect(batchJobId("run-1", [a, b])).not.toBe(batchJobId("run-2", [a, b]));
    expect(batchJobId("run-1", [a, b])).toMatch(/^run-1\/pope-random-0001\/0\/2-[0-9a-f]{16}$/);
  });

  it("holds no ':' (BullMQ refuses it), whatever the run and case ids hold", () => {
    expect(batchJobId("run:1", [c])).not.toContain(":");
  });

  it("refuses an empty batch", () => {
    expect(() => batchJobId("run-1", [])).toThrow(/at least one trial, got none/);
  });
});

describe("a work item's images", () => {
  it("come back as they went: encoded bytes, or decoded pixels", () => {
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    expect(decodeImage(encodeImage(bytes))).toEqual(bytes);
    const pixels = { width: 2, height: 1, data: new Uint8Array([1, 2, 3, 255, 4, 5, 6, 255]) };
    expect(decodeImage(encodeImage(pixels as never))).toEqual(pixels);
  });
});

describe("imageKey", () => {
  it("names an image by its content: the same bytes or pixels alike, any other image otherwise", () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    expect(imageKey(png)).toBe(imageKey(new Uint8Array(png)));
    expect(imageKey(png)).toMatch(/^b-[0-9a-f]{64}$/);
    expect(imageKey(png)).not.toBe(imageKey(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 4])));
    const data = new Uint8Array([1, 2, 3, 255, 4, 5, 6, 255]);
    const wide = { width: 2, height: 1, data } as never;
    const tall = { width: 1, height: 2, data } as never;
    expect(imageKey(wide)).toMatch(/^p2x1-[0-9a-f]{64}$/);
    // The same pixels in another shape are another image.
    expect(imageKey(wide)).not.toBe(imageKey(tall));
    // A view into a larger buffer is keyed by what it shows.
    const view = new Uint8Array([9, ...data, 9]).subarray(1, 9);
    expect(imageKey({ width: 2, height: 1, data: view } as never)).toBe(imageKey(wide));
    expect(imageRedisKey(imageKey(png))).toMatch(/^evalrx-trials:image:b-/);
  });
});
