import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decode } from "fast-png";
import { zlibSync, type DeflateOptions } from "fflate";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { toRgb } from "./image.ts";
import { REPO_ROOT } from "./load.node.ts";
import { decodePngFast } from "./png-decode.ts";
import { concatBytes } from "../core/bytes.ts";

// The oracle is fast-png's own decode: the fast path must give its pixels, or step aside.

/** decodePngFast's answer equals fast-png's in every field toRgb reads, and in array type. */
function expectSameAsFastPng(bytes: Uint8Array): void {
  const fast = decodePngFast(bytes);
  const reference = decode(bytes);
  expect(fast).toBeDefined();
  expect(fast!.data.constructor).toBe(reference.data.constructor);
  expect({ ...fast, data: Array.from(fast!.data) }).toEqual({
    width: reference.width,
    height: reference.height,
    depth: reference.depth,
    channels: reference.channels,
    data: Array.from(reference.data),
  });
}

/** toRgb as it was before the fast path (fast-png decodes every PNG): image.ts loaded afresh without it. */
async function toRgbBefore(): Promise<typeof toRgb> {
  vi.resetModules();
  vi.doMock("./png-decode.ts", () => ({ decodePngFast: () => undefined }));
  try {
    return (await import("./image.ts")).toRgb;
  } finally {
    vi.doUnmock("./png-decode.ts");
  }
}

/** What toRgb gives for a file: its pixels, or its error message. */
function outcome(decodeToRgb: typeof toRgb, bytes: Uint8Array) {
  try {
    const { width, height, rgb } = decodeToRgb(bytes);
    return { width, height, rgb: Array.from(rgb) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

let before: typeof toRgb;
beforeAll(async () => {
  before = await toRgbBefore();
  expect(before).not.toBe(toRgb);
});

/** toRgb gives what it gave before the fast path: the same pixels, or the same error. */
function expectToRgbAsBefore(bytes: Uint8Array): void {
  expect(outcome(toRgb, bytes)).toEqual(outcome(before, bytes));
}

describe("the demo images", () => {
  const dir = join(REPO_ROOT, "public/demo/images");
  const files = readdirSync(dir).filter((f) => f.endsWith(".png"));

  it("decode to fast-png's pixels, every one", () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(join(dir, file)));
      expectSameAsFastPng(bytes);
      expectToRgbAsBefore(bytes);
    }
  });
});

// ---- building PNGs: seeded pixels, filtered rows, chunks with their CRCs ----

/** mulberry32: the same pixels every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array | number[] = []): Uint8Array {
  const body = Uint8Array.from([...type].map((ch) => ch.charCodeAt(0)).concat(Array.from(data)));
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(body, 4);
  view.setUint32(8 + data.length, crc32(body));
  return out;
}

const SIGNATURE = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number, depth: number, colorType: number, interlace = 0): Uint8Array {
  const data = new Uint8Array(13);
  const view = new DataView(data.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  data.set([depth, colorType, 0, 0, interlace], 8);
  return chunk("IHDR", data);
}

/** A PNG from a header and zlib data, the data split over `splits` IDAT chunks, `extra` chunks before them. */
function png(header: Uint8Array, zlib: Uint8Array, options: { splits?: number; extra?: Uint8Array[] } = {}) {
  const splits = options.splits ?? 1;
  const idats: Uint8Array[] = [];
  for (let k = 0; k < splits; k++)
    idats.push(
      chunk(
        "IDAT",
        zlib.subarray(Math.floor((k * zlib.length) / splits), Math.floor(((k + 1) * zlib.length) / splits)),
      ),
    );
  return concatBytes([SIGNATURE, header, ...(options.extra ?? []), ...idats, chunk("IEND")]);
}

/** The prediction a filter type makes from left (a), up (b) and up-left (c), as the PNG spec defines it. */
function predict(filter: number, a: number, b: number, c: number): number {
  if (filter === 0) return 0;
  if (filter === 1) return a;
  if (filter === 2) return b;
  if (filter === 3) return (a + b) >> 1;
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Unfiltered rows of `stride` bytes → the scanlines a PNG stores, row y filtered with `filterOf(y)`. */
function filterRows(rows: Uint8Array, stride: number, bpp: number, filterOf: (y: number) => number): Uint8Array {
  const height = rows.length / stride;
  const out = new Uint8Array(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const filter = filterOf(y);
    out[y * (stride + 1)] = filter;
    for (let i = 0; i < stride; i++) {
      const at = (yy: number, ii: number) => (yy >= 0 && ii >= 0 ? rows[yy * stride + ii]! : 0);
      const value = rows[y * stride + i]! - predict(filter, at(y, i - bpp), at(y - 1, i), at(y - 1, i - bpp));
      out[y * (stride + 1) + 1 + i] = value & 0xff;
    }
  }
  return out;
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Seeded random samples (bytes, big-endian at depth 16) for an image, and the sample values themselves. */
function pixels(width: number, height: number, depth: number, colorType: number, seed: number) {
  const next = random(seed);
  const samples = Array.from({ length: width * height * CHANNELS[colorType]! }, () => Math.floor(next() * 2 ** depth));
  const bytes = depth === 16 ? new Uint8Array(samples.flatMap((v) => [v >> 8, v & 0xff])) : Uint8Array.from(samples);
  return { samples, bytes };
}

describe("generated PNGs", () => {
  const cases: { name: string; bytes: Uint8Array }[] = [];
  let n = 0;
  for (const colorType of [0, 2, 4, 6])
    for (const depth of [8, 16])
      for (const width of [1, 7, 33])
        for (const height of [1, 5, 6, 11]) {
          const seed = ++n;
          const bpp = (CHANNELS[colorType]! * depth) / 8;
          const { bytes } = pixels(width, height, depth, colorType, seed);
          // Filters rotate by row, and the start rotates by image, so every filter also meets the first row.
          const scanlines = filterRows(bytes, width * bpp, bpp, (y) => (y + seed) % 5);
          cases.push({
            name: `colour type ${colorType}, depth ${depth}, ${width}×${height}`,
            bytes: png(
              ihdr(width, height, depth, colorType),
              zlibSync(scanlines, { level: (seed % 10) as DeflateOptions["level"] }),
              {
                splits: 1 + (seed % 4),
                extra: seed % 3 ? [] : [chunk("pHYs", new Uint8Array(9)), chunk("tEXt", [...Buffer.from("Title\0x")])],
              },
            ),
          });
        }

  it("cover colour types 0/2/4/6 at depths 8 and 16, odd sizes, every filter on first and later rows", () => {
    expect(cases).toHaveLength(4 * 2 * 3 * 4);
  });

  for (const { name, bytes } of cases)
    it(`decode to fast-png's pixels: ${name}`, () => {
      expectSameAsFastPng(bytes);
      expectToRgbAsBefore(bytes);
    });

  it("decode to the samples they were made from (fast-png agreeing is not the only check)", () => {
    const { samples, bytes } = pixels(9, 4, 16, 6, 99);
    const file = png(ihdr(9, 4, 16, 6), zlibSync(filterRows(bytes, 9 * 8, 8, (y) => 4 - y)));
    expect(Array.from(decodePngFast(file)!.data)).toEqual(samples);
  });

  it("decode the same when the zlib stream holds more than the rows (extra bytes are ignored, as fast-png does)", () => {
    // A smooth image, so the deflate stream is Huffman-coded (random bytes would be stored as they are).
    const bytes = Uint8Array.from({ length: 7 * 5 * 3 }, (_, i) => (i % 3 === 0 ? i : 60));
    const scanlines = filterRows(bytes, 21, 3, (y) => y % 5);
    const longer = concatBytes([scanlines, new Uint8Array(40).fill(9)]);
    const huffman = png(ihdr(7, 5, 8, 2), zlibSync(longer, { level: 9 }));
    expect(zlibSync(longer, { level: 9 })[2]! & 0b110).not.toBe(0); // not a stored block
    expectSameAsFastPng(huffman);
    expectToRgbAsBefore(huffman);
    // Stored blocks cannot write past the buffer: fast-png decodes that one, through toRgb's fallback.
    const stored = png(ihdr(7, 5, 8, 2), zlibSync(longer, { level: 0 }));
    expect(decodePngFast(stored)).toBeUndefined();
    expect(Array.from(toRgb(stored).rgb)).toEqual(Array.from(bytes));
    expectToRgbAsBefore(stored);
  });
});

describe("PNGs off the fast path", () => {
  const rgb = pixels(7, 5, 8, 2, 42);
  const good = png(ihdr(7, 5, 8, 2), zlibSync(filterRows(rgb.bytes, 21, 3, (y) => y % 5)));

  /** fast-png's error for a file, which toRgb must still report. */
  const fastPngError = (bytes: Uint8Array) => {
    try {
      decode(bytes);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("fast-png decoded it");
  };
  const expectFastPngError = (bytes: Uint8Array) => {
    expect(decodePngFast(bytes)).toBeUndefined();
    expect(() => toRgb(bytes)).toThrow(`image is not a readable PNG: ${fastPngError(bytes)}`);
    expectToRgbAsBefore(bytes);
  };

  it("the good file the broken ones are made from is on it", () => {
    expectSameAsFastPng(good);
    expect(Array.from(toRgb(good).rgb)).toEqual(Array.from(rgb.bytes));
  });

  it("interlaced (Adam7): fast-png decodes it through toRgb", () => {
    /** Adam7: 7 passes, each its own small image of every dx-th pixel of every dy-th row (filter 0 here). */
    const adam7 = (bytes: Uint8Array, width: number, height: number, bpp: number) => {
      const passes = [
        [0, 0, 8, 8],
        [4, 0, 8, 8],
        [0, 4, 4, 8],
        [2, 0, 4, 4],
        [0, 2, 2, 4],
        [1, 0, 2, 2],
        [0, 1, 1, 2],
      ] as const;
      const rows: number[] = [];
      for (const [x0, y0, dx, dy] of passes) {
        const xs = Array.from({ length: width }, (_, x) => x).filter((x) => x >= x0 && (x - x0) % dx === 0);
        for (let y = y0; y < height && xs.length; y += dy)
          rows.push(0, ...xs.flatMap((x) => [...bytes.subarray((y * width + x) * bpp, (y * width + x + 1) * bpp)]));
      }
      return Uint8Array.from(rows);
    };
    const interlaced = png(ihdr(7, 5, 8, 2, 1), zlibSync(adam7(rgb.bytes, 7, 5, 3)));
    expect(decodePngFast(interlaced)).toBeUndefined();
    expect(Array.from(toRgb(interlaced).rgb)).toEqual(Array.from(rgb.bytes));
    expectToRgbAsBefore(interlaced);
    // One pixel wide, the passes hold every row once: the raw size is a plain PNG's, only the row order differs.
    const column = rgb.bytes.subarray(0, 5 * 3);
    const narrow = png(ihdr(1, 5, 8, 2, 1), zlibSync(adam7(column, 1, 5, 3)));
    expect(decodePngFast(narrow)).toBeUndefined();
    expect(Array.from(toRgb(narrow).rgb)).toEqual(Array.from(column));
    expectToRgbAsBefore(narrow);
  });

  it("palette (colour type 3): fast-png decodes it through toRgb", () => {
    const palette = [200, 10, 30, 0, 128, 255, 17, 17, 17];
    const indices = Uint8Array.from({ length: 7 * 5 }, (_, p) => (p * 5) % 3);
    const file = png(ihdr(7, 5, 8, 3), zlibSync(filterRows(indices, 7, 1, () => 1)), {
      extra: [chunk("PLTE", palette)],
    });
    expect(decodePngFast(file)).toBeUndefined();
    const expected = Array.from(indices).flatMap((i) => palette.slice(i * 3, i * 3 + 3));
    expect(Array.from(toRgb(file).rgb)).toEqual(expected);
    expectToRgbAsBefore(file);
  });

  it("bit depth below 8: fast-png decodes it through toRgb", () => {
    // Grey at depth 4, two pixels a byte, rows padded to whole bytes.
    const { samples } = pixels(7, 5, 4, 0, 3);
    const packed = new Uint8Array(5 * 4);
    samples.forEach((v, p) => {
      const [y, x] = [Math.floor(p / 7), p % 7];
      packed[y * 4 + (x >> 1)]! |= x % 2 ? v : v << 4;
    });
    const file = png(ihdr(7, 5, 4, 0), zlibSync(filterRows(packed, 4, 1, (y) => y % 5)));
    expect(decodePngFast(file)).toBeUndefined();
    expect(Array.from(decode(file).data)).toEqual(Array.from(packed)); // fast-png keeps the samples packed
    expectToRgbAsBefore(file);
  });

  it("a truncated file: toRgb gives fast-png's error", () => {
    expectFastPngError(good.subarray(0, good.length - 30));
    expectFastPngError(good.subarray(0, good.length - 12)); // no IEND
  });

  it("corrupt zlib data: toRgb gives fast-png's error", () => {
    const zlib = zlibSync(filterRows(rgb.bytes, 21, 3, () => 0));
    const badHeader = zlib.slice();
    badHeader[0] = 0x79;
    expectFastPngError(png(ihdr(7, 5, 8, 2), badHeader));
    const badBlockType = zlib.slice();
    badBlockType[2] = 0b111; // final block, type 3 (reserved)
    expectFastPngError(png(ihdr(7, 5, 8, 2), badBlockType));
    // The deflate stream cut short (the checksum kept): fflate runs out of data.
    expectFastPngError(png(ihdr(7, 5, 8, 2), concatBytes([zlib.subarray(0, zlib.length / 2), zlib.subarray(-4)])));
  });

  it("too few rows, or none at all: toRgb gives fast-png's error", () => {
    expectFastPngError(png(ihdr(7, 5, 8, 2), zlibSync(filterRows(rgb.bytes.subarray(0, 21 * 4), 21, 3, () => 2))));
    // An empty deflate body: fflate would hand back the (zero-filled) output buffer as if inflated.
    expectFastPngError(png(ihdr(7, 5, 8, 2), Uint8Array.from([0x78, 0x9c, 0, 0, 0, 1])));
  });

  it("an unknown filter type: toRgb gives fast-png's error", () => {
    const scanlines = filterRows(rgb.bytes, 21, 3, () => 0);
    scanlines[2 * 22] = 5;
    expectFastPngError(png(ihdr(7, 5, 8, 2), zlibSync(scanlines)));
  });

  it("chunks fast-png checks and refuses: toRgb gives its error", () => {
    const rgba = pixels(3, 2, 8, 6, 5);
    const zlib = zlibSync(filterRows(rgba.bytes, 12, 4, () => 0));
    expectFastPngError(png(ihdr(3, 2, 8, 6), zlib, { extra: [chunk("tRNS", [0, 1])] })); // no tRNS with alpha
    expectFastPngError(png(ihdr(3, 2, 8, 6), zlib, { extra: [chunk("pHYs", new Uint8Array(8))] }));
    expectFastPngError(png(ihdr(3, 2, 8, 6), zlib, { extra: [chunk("tEXt", [0, 65])] })); // empty keyword
    const longEnd = concatBytes([good.subarray(0, good.length - 12), chunk("IEND", [0])]);
    expectFastPngError(longEnd);
  });
});

describe("grey PNGs of 1, 2 and 4 bits (rows of packed samples)", () => {
  for (const depth of [1, 2, 4])
    it(`decode through toRgb to their samples, scaled to 0–255: depth ${depth}`, () => {
      const [width, height] = [11, 3];
      const next = random(depth);
      const samples = Array.from({ length: width * height }, () => Math.floor(next() * 2 ** depth));
      const stride = Math.ceil((width * depth) / 8);
      const rows = new Uint8Array(stride * height);
      samples.forEach((value, p) => {
        const bit = (p % width) * depth;
        rows[Math.floor(p / width) * stride + (bit >> 3)]! |= value << (8 - depth - (bit & 7));
      });
      // Filters work on whole bytes; below 8 bits the byte to the left is the one they predict from.
      const file = png(ihdr(width, height, depth, 0), zlibSync(filterRows(rows, stride, 1, (y) => (y + 1) % 5)));
      const { rgb } = toRgb(file);
      const grey = samples.map((v) => Math.round((v * 255) / (2 ** depth - 1)));
      expect(Array.from(rgb)).toEqual(grey.flatMap((g) => [g, g, g]));
    });
});
