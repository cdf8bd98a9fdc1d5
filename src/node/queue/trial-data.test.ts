import { describe, expect, it } from "vitest";
import { batchJobId, decodeImage, encodeImage } from "./trial-data.ts";

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
