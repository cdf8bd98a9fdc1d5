import { convertIndexedToRgb, decode as decodePngBytes } from "fast-png";
import type { ImagePixels } from "../core/model.ts";
import { decodePngFast } from "./png-decode.ts";

/** Largest image side accepted (pixels); bigger inputs are refused before decoding. */
export const MAX_IMAGE_SIDE = 4096;
/** Largest encoded image accepted (bytes). */
export const MAX_IMAGE_BYTES = 32 * 1024 * 1024;

/** RGB pixels, 3 bytes per pixel, row-major. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Decodes an image input to RGB with a pure-JS PNG decoder, so a page and
 * Node get identical pixels. Accepts PNG bytes or decoded RGBA pixels (what a
 * page gets from a canvas for JPEGs). Refuses non-images and images over the
 * size limit with a message saying what was expected.
 *
 * @example
 * toRgb(pngBytes) // → { width: 48, height: 48, rgb: Uint8Array(6912) }
 */
export function toRgb(image: Uint8Array | ImagePixels): RgbImage {
  if (!(image instanceof Uint8Array)) return fromPixels(image);
  if (image.length > MAX_IMAGE_BYTES)
    throw new Error(`image is ${image.length} bytes, over the ${MAX_IMAGE_BYTES}-byte limit: use a smaller image`);
  if (image.length < 24 || PNG_SIGNATURE.some((b, i) => image[i] !== b)) {
    const jpeg = image[0] === 0xff && image[1] === 0xd8;
    throw new Error(
      jpeg
        ? "image is a JPEG: pass PNG bytes, or decoded RGBA pixels { width, height, data } (a page can decode it with a canvas)"
        : "image is not a PNG (no PNG signature): pass PNG bytes or decoded RGBA pixels { width, height, data }",
    );
  }
  // IHDR width/height are the first fields after the signature and chunk header: check them before decoding.
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  checkSize(width, height);
  let png;
  try {
    png = decodePngFast(image) ?? decodePngBytes(image);
  } catch (error) {
    throw new Error(`image is not a readable PNG: ${(error as Error).message}`, { cause: error });
  }
  let data = png.data;
  let channels = png.channels;
  if (png.palette) {
    data = convertIndexedToRgb(png);
    channels = png.transparency ? 4 : 3;
  } else if (png.depth < 8) {
    // fast-png keeps 1-, 2- and 4-bit grey as packed rows; PNG allows those depths for grey alone (one channel).
    data = unpackSamples(png.data, png.width, png.height, png.depth);
  }
  const rgb = new Uint8Array(png.width * png.height * 3);
  const scale = png.depth === 16 ? 1 / 257 : png.depth < 8 && !png.palette ? 255 / (2 ** png.depth - 1) : 1;
  for (let p = 0; p < png.width * png.height; p++) {
    for (let c = 0; c < 3; c++) {
      // Grey (1–2 channels) repeats its one value; RGB(A) takes its first three.
      const source = channels >= 3 ? p * channels + c : p * channels;
      rgb[p * 3 + c] = Math.round(data[source]! * scale);
    }
  }
  return { width: png.width, height: png.height, rgb };
}

/**
 * The same decode as `toRgb`, as opaque RGBA pixels `{ width, height, data }`:
 * what a crop or a canvas needs (pixels given in are checked, and kept).
 *
 * @example
 * toRgba(pngBytes) // → { width: 48, height: 48, data: Uint8ClampedArray(9216) }, every alpha 255
 */
export function toRgba(image: Uint8Array | ImagePixels): ImagePixels {
  const { width, height, rgb } = toRgb(image);
  if (!(image instanceof Uint8Array)) return image;
  const data = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let p = 0; p < width * height; p++) data.set(rgb.subarray(p * 3, p * 3 + 3), p * 4);
  return { width, height, data };
}

/**
 * One sample per byte from rows of packed `depth`-bit samples (1, 2 or 4 bits, the leftmost pixel in the high bits,
 * each row starting on a byte), as PNG stores grey below 8 bits.
 *
 * @example unpackSamples(Uint8Array.of(0b10110000), 4, 1, 1) // → Uint8Array [1, 0, 1, 1]
 */
export function unpackSamples(rows: ArrayLike<number>, width: number, height: number, depth: number): Uint8Array {
  if (![1, 2, 4].includes(depth)) throw new Error(`unpackSamples: depth must be 1, 2 or 4 bits, got ${depth}`);
  const stride = Math.ceil((width * depth) / 8);
  if (rows.length < stride * height)
    throw new Error(
      `unpackSamples: ${width}×${height} at ${depth} bits needs ${stride * height} bytes, got ${rows.length}`,
    );
  const out = new Uint8Array(width * height);
  const mask = (1 << depth) - 1;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const bit = x * depth;
      out[y * width + x] = (rows[y * stride + (bit >> 3)]! >> (8 - depth - (bit & 7))) & mask;
    }
  return out;
}

function checkSize(width: number, height: number): void {
  if (width < 1 || height < 1) throw new Error(`image has no pixels (${width}×${height})`);
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE)
    throw new Error(`image is ${width}×${height}, over the ${MAX_IMAGE_SIDE}-pixel side limit: downscale it first`);
}

function fromPixels(image: ImagePixels): RgbImage {
  const { width, height, data } = image;
  checkSize(width, height);
  if (data.length !== width * height * 4)
    throw new Error(
      `image pixels: expected ${width}×${height}×4 = ${width * height * 4} RGBA bytes, got ${data.length}`,
    );
  const rgb = new Uint8Array(width * height * 3);
  for (let p = 0; p < width * height; p++) {
    rgb[p * 3] = data[p * 4]!;
    rgb[p * 3 + 1] = data[p * 4 + 1]!;
    rgb[p * 3 + 2] = data[p * 4 + 2]!;
  }
  return { width, height, rgb };
}

/** How an image processor (CLIPImageProcessor) turns pixels into model input. */
export interface ImageProcessing {
  readonly height: number;
  readonly width: number;
  readonly rescaleFactor: number;
  readonly mean: readonly number[];
  readonly std: readonly number[];
}

/** Reads the processing parameters from a `preprocessor_config.json`. */
export function imageProcessing(config: Record<string, unknown>): ImageProcessing {
  const size = config.size as { height?: number; width?: number; shortest_edge?: number } | number | undefined;
  const side = typeof size === "number" ? size : (size?.shortest_edge ?? undefined);
  const height = typeof size === "object" && size?.height ? size.height : side;
  const width = typeof size === "object" && size?.width ? size.width : side;
  if (!height || !width) throw new Error("preprocessor_config.json: expected size { height, width }");
  const doRescale = config.do_rescale !== false;
  const doNormalize = config.do_normalize !== false;
  return {
    height,
    width,
    rescaleFactor: doRescale ? Number(config.rescale_factor ?? 1 / 255) : 1,
    mean: doNormalize ? ((config.image_mean as number[]) ?? [0, 0, 0]) : [0, 0, 0],
    std: doNormalize ? ((config.image_std as number[]) ?? [1, 1, 1]) : [1, 1, 1],
  };
}

/**
 * The model's `pixel_values`: RGB → (bilinear resize when the size differs) →
 * × rescale → (x − mean) / std → CHW float32, shape [1, 3, H, W].
 *
 * @example
 * pixelValues(toRgb(png), imageProcessing(preprocessorConfig)).length // → 3 * 48 * 48
 */
export function pixelValues(image: RgbImage, p: ImageProcessing): Float32Array {
  const rgb =
    image.width === p.width && image.height === p.height ? image.rgb : resizeBilinear(image, p.width, p.height).rgb;
  const plane = p.width * p.height;
  const out = new Float32Array(3 * plane);
  for (let c = 0; c < 3; c++) {
    const mean = p.mean[c] ?? p.mean[0]!;
    const std = p.std[c] ?? p.std[0]!;
    for (let i = 0; i < plane; i++) out[c * plane + i] = (rgb[i * 3 + c]! * p.rescaleFactor - mean) / std;
  }
  return out;
}

/** Bilinear resize with half-pixel centres (what most image libraries do for upscaling). */
export function resizeBilinear(image: RgbImage, width: number, height: number): RgbImage {
  const out = new Uint8Array(width * height * 3);
  const sx = image.width / width;
  const sy = image.height / height;
  for (let y = 0; y < height; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), image.height - 1);
    const y0 = Math.floor(fy);
    const y1 = Math.min(y0 + 1, image.height - 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), image.width - 1);
      const x0 = Math.floor(fx);
      const x1 = Math.min(x0 + 1, image.width - 1);
      const wx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const at = (xx: number, yy: number) => image.rgb[(yy * image.width + xx) * 3 + c]!;
        const top = at(x0, y0) * (1 - wx) + at(x1, y0) * wx;
        const bottom = at(x0, y1) * (1 - wx) + at(x1, y1) * wx;
        out[(y * width + x) * 3 + c] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return { width, height, rgb: out };
}
