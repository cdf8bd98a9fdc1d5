import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "./load.node.ts";
import { toRgb, toRgba } from "./image.ts";

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
