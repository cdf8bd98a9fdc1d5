import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "./load.node.ts";
import { toRgb, toRgba, unpackSamples } from "./image.ts";

const png = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/images/scene-0001.png")));

it("decodes PNG bytes to opaque RGBA pixels that hold toRgb's colours", () => {
  const { width, height, rgb } = toRgb(png);
  const px = toRgba(png);
  expect([px.width, px.height]).toEqual([width, height]);
  expect(px.data).toHaveLength(width * height * 4);
  for (const p of [0, 17, width * height - 1]) {
    expect(Array.from(px.data.subarray(p * 4, p * 4 + 4))).toEqual([...rgb.subarray(p * 3, p * 3 + 3), 255]);
  }
});

it("keeps RGBA pixels given in, after checking their size", () => {
  const px = { width: 1, height: 1, data: new Uint8ClampedArray([1, 2, 3, 4]) };
  expect(toRgba(px)).toBe(px);
  expect(() => toRgba({ width: 2, height: 1, data: new Uint8ClampedArray(4) })).toThrow(
    "image pixels: expected 2×1×4 = 8 RGBA bytes, got 4",
  );
  expect(() => toRgba(new Uint8Array([1, 2, 3]))).toThrow("image is not a PNG");
});

it("unpacks rows of 1-, 2- and 4-bit samples, each row from a new byte, and refuses other depths and short rows", () => {
  expect(Array.from(unpackSamples(Uint8Array.of(0b10110000), 4, 1, 1))).toEqual([1, 0, 1, 1]);
  // 3 pixels of 2 bits per row: 6 bits, so each row takes one byte.
  expect(Array.from(unpackSamples(Uint8Array.of(0b11_01_10_00, 0b00_10_11_00), 3, 2, 2))).toEqual([3, 1, 2, 0, 2, 3]);
  expect(Array.from(unpackSamples(Uint8Array.of(0xa5, 0xf0), 3, 1, 4))).toEqual([10, 5, 15]);
  expect(() => unpackSamples(new Uint8Array(4), 4, 1, 8)).toThrow("unpackSamples: depth must be 1, 2 or 4 bits, got 8");
  expect(() => unpackSamples(new Uint8Array(1), 9, 1, 1)).toThrow("unpackSamples: 9×1 at 1 bits needs 2 bytes, got 1");
});
