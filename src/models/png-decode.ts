/**
 * What are this PNG's pixels, decoded without fast-png's streaming inflate?
 * For the common PNG (8- or 16-bit grey, grey+alpha, RGB or RGBA, not
 * interlaced) the raw size is known from the header, so the IDAT data is
 * inflated in one go into a buffer of exactly that size. fast-png inflates
 * through fflate's streaming `Unzlib`, which allocates a 32 KB window and a
 * ≥ 128 KB output per decode: nothing in Node, but ~1 ms per decode in
 * Chromium, where our model worker decodes a PNG on every model call.
 *
 * Anything else (palette, bit depth < 8, interlacing, chunks fast-png checks,
 * a broken file) answers `undefined`: the caller decodes with fast-png, which
 * also gives its own error for a broken file. Pixels are fast-png's, bit for bit.
 *
 * @example
 * decodePngFast(scenePng) // → { width: 48, height: 48, depth: 8, channels: 3, data: Uint8Array(6912) }
 * decodePngFast(palettePng) ?? decode(palettePng) // → undefined here, so fast-png decodes it
 */
import { unzlibSync } from "fflate";
import { concatBytes } from "../core/bytes.ts";

/** The fields of fast-png's `decode` result that a decode here fills; never a palette. */
export interface FastPng {
  readonly width: number;
  readonly height: number;
  readonly depth: 8 | 16;
  readonly channels: number;
  /** Row-major samples: `Uint8Array` at depth 8, `Uint16Array` at depth 16 (as fast-png gives them). */
  readonly data: Uint8Array | Uint16Array;
  readonly palette?: undefined;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Samples per pixel for each colour type on the fast path: grey, RGB, grey+alpha, RGBA. */
const CHANNELS: Partial<Record<number, number>> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/** Decodes a PNG on the fast path, or `undefined` when it is off it (then use fast-png). */
export function decodePngFast(bytes: Uint8Array): FastPng | undefined {
  if (bytes.length < 33 || SIGNATURE.some((b, i) => bytes[i] !== b)) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // IHDR comes first and is 13 bytes: width, height, depth, colour type, compression, filter, interlace.
  if (view.getUint32(8) !== 13 || chunkType(bytes, 8) !== "IHDR") return undefined;
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  const depth = bytes[24]!;
  const channels = CHANNELS[bytes[25]!];
  const compression = bytes[26];
  const filterMethod = bytes[27];
  const interlace = bytes[28];
  if ((depth !== 8 && depth !== 16) || !channels || compression || filterMethod || interlace) return undefined;
  if (width === 0 || height === 0) return undefined;

  const idat = imageData(bytes, view, 33);
  // An empty deflate body (2-byte header, 4-byte checksum) makes fflate hand back the output buffer untouched.
  if (!idat || idat.length <= 6) return undefined;
  const stride = (width * channels * depth) / 8; // bytes per row, without its filter byte
  // Inflated into a buffer of exactly the raw size: no growing, no streaming window. A stream holding more
  // than the rows loses the excess (fflate drops writes past a given buffer), as fast-png ignores it too.
  let raw: Uint8Array;
  try {
    raw = unzlibSync(idat, { out: new Uint8Array(height * (stride + 1)) });
  } catch {
    return undefined;
  }
  if (raw.length !== height * (stride + 1)) return undefined;

  const pixels = unfilter(raw, height, stride, (channels * depth) / 8);
  if (!pixels) return undefined;
  return { width, height, depth, channels, data: depth === 8 ? pixels : bigEndian16(pixels) };
}

/**
 * The IDAT chunks' data, joined, from the chunks after IHDR up to IEND; `undefined` when a chunk runs past
 * the end, or for a chunk fast-png reads and might refuse (a file it refuses must not decode here).
 */
function imageData(bytes: Uint8Array, view: DataView, start: number): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  for (let at = start; ;) {
    if (at + 12 > bytes.length) return undefined; // no IEND
    const length = view.getUint32(at);
    const type = chunkType(bytes, at);
    const data = bytes.subarray(at + 8, at + 8 + length);
    at += 12 + length; // length, type, data, CRC (fast-png does not check CRCs, so neither does this)
    if (at > bytes.length) return undefined;
    if (type === "IDAT") parts.push(data);
    else if (type === "IEND") return length === 0 ? (parts.length === 1 ? parts[0]! : concatBytes(parts)) : undefined;
    // A palette, transparency or ICC profile, or a second header: fast-png's to read (and to check).
    else if (type === "PLTE" || type === "tRNS" || type === "iCCP" || type === "IHDR") return undefined;
    // fast-png reads exactly 9 bytes of pHYs, and refuses a tEXt whose keyword it cannot read.
    else if (type === "pHYs" && length !== 9) return undefined;
    else if (type === "tEXt" && !plainKeyword(data)) return undefined;
  }
}

function chunkType(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!);
}

/** A tEXt keyword fast-png surely accepts: 1–79 printable ASCII bytes before a NUL inside the chunk. */
function plainKeyword(data: Uint8Array): boolean {
  const end = data.indexOf(0);
  return end >= 1 && end <= 79 && data.subarray(0, end).every((b) => b >= 0x20 && b <= 0x7e);
}

/**
 * Undoes the PNG row filters (https://www.w3.org/TR/png/#9Filters): each row starts with its filter type,
 * and each byte was stored as its difference from a prediction made from the byte a pixel to the left (a),
 * the byte above (b) and the byte above-left (c), all 0 off the image. `undefined` for an unknown filter.
 */
function unfilter(raw: Uint8Array, height: number, stride: number, bpp: number): Uint8Array | undefined {
  const out = new Uint8Array(height * stride);
  const none = new Uint8Array(stride); // the row above the first
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = out.subarray(y * stride, (y + 1) * stride);
    const above = y === 0 ? none : out.subarray((y - 1) * stride, y * stride);
    // Stores into a Uint8Array wrap modulo 256, which is the arithmetic the filters are defined in. The
    // first pixel's bytes have no left neighbour (0), hence the split loops.
    switch (filter) {
      case 0: // None
        row.set(line);
        break;
      case 1: // Sub: a
        for (let i = 0; i < bpp; i++) row[i] = line[i]!;
        for (let i = bpp; i < stride; i++) row[i] = line[i]! + row[i - bpp]!;
        break;
      case 2: // Up: b
        for (let i = 0; i < stride; i++) row[i] = line[i]! + above[i]!;
        break;
      case 3: // Average: (a + b) / 2, rounded down
        for (let i = 0; i < bpp; i++) row[i] = line[i]! + (above[i]! >> 1);
        for (let i = bpp; i < stride; i++) row[i] = line[i]! + ((row[i - bpp]! + above[i]!) >> 1);
        break;
      case 4: // Paeth: whichever of a, b, c is nearest a + b − c
        for (let i = 0; i < bpp; i++) row[i] = line[i]! + above[i]!;
        for (let i = bpp; i < stride; i++) row[i] = line[i]! + paeth(row[i - bpp]!, above[i]!, above[i - bpp]!);
        break;
      default:
        return undefined;
    }
  }
  return out;
}

/** The one of a, b, c nearest to a + b − c (ties: a, then b). */
function paeth(a: number, b: number, c: number): number {
  const pa = Math.abs(b - c);
  const pb = Math.abs(a - c);
  const pc = Math.abs(a + b - 2 * c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** 16-bit samples are stored most significant byte first. */
function bigEndian16(bytes: Uint8Array): Uint16Array {
  const out = new Uint16Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (bytes[2 * i]! << 8) | bytes[2 * i + 1]!;
  return out;
}
