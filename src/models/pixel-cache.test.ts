import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { imageProcessing, pixelValues, toRgb } from "./image.ts";
import { PixelCache } from "./pixel-cache.ts";

const png = new Uint8Array(readFileSync(new URL("../../public/demo/images/scene-0001.png", import.meta.url)));
const other = new Uint8Array(readFileSync(new URL("../../public/demo/images/scene-0002.png", import.meta.url)));
const processing = imageProcessing({
  size: { height: 48, width: 48 },
  image_mean: [0.5, 0.5, 0.5],
  image_std: [0.5, 0.5, 0.5],
});
const make = (image: Uint8Array) => () => pixelValues(toRgb(image), processing);

describe("PixelCache", () => {
  it("makes an image's input once per content, and gives what make gave", () => {
    const cache = new PixelCache(2 ** 20);
    let made = 0;
    const counted = (image: Uint8Array) => () => (made++, make(image)());
    const first = cache.get(png, counted(png));
    expect(first).toEqual(make(png)());
    expect(cache.get(png.slice(), counted(png))).toBe(first); // a copy of the bytes is the same content
    expect(made).toBe(1);
    expect(cache.get(other, counted(other))).toEqual(make(other)());
    expect(made).toBe(2);
  });

  it("never answers from a different content, even one byte apart", () => {
    const cache = new PixelCache(2 ** 20);
    const a = cache.get(png, make(png));
    const changed = png.slice();
    changed[changed.length - 20] = 255 - changed[changed.length - 20]!;
    let made = false;
    const b = cache.get(changed, () => ((made = true), new Float32Array(1)));
    expect(made).toBe(true);
    expect(b).not.toBe(a);
  });

  it("tells pixels of different sizes apart though their bytes are equal", () => {
    const cache = new PixelCache(2 ** 20);
    const data = new Uint8ClampedArray(16).fill(7);
    const wide = cache.get({ width: 4, height: 1, data }, () => Float32Array.of(1));
    const tall = cache.get({ width: 1, height: 4, data }, () => Float32Array.of(2));
    expect([wide[0], tall[0]]).toEqual([1, 2]);
    expect(cache.get({ width: 4, height: 1, data: data.slice() }, () => Float32Array.of(3))[0]).toBe(1);
  });

  it("keeps at most maxBytes, dropping the least recently used", () => {
    const entry = png.byteLength + 3 * 48 * 48 * 4;
    const cache = new PixelCache(entry * 1.5);
    cache.get(png, make(png));
    cache.get(other, make(other));
    expect(cache.size).toBe(1);
    let remade = false;
    cache.get(png, () => ((remade = true), make(png)()));
    expect(remade).toBe(true);
  });

  it("refuses a negative size, and propagates what make throws without keeping anything", () => {
    expect(() => new PixelCache(-1)).toThrow(/maxBytes must be ≥ 0/);
    const cache = new PixelCache(2 ** 20);
    expect(() => cache.get(Uint8Array.of(1, 2, 3), make(Uint8Array.of(1, 2, 3)))).toThrow(/not a PNG/);
    expect(cache.size).toBe(0);
  });
});
