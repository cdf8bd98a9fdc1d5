import { decode as decodePng } from "fast-png";
import { decode as decodeJpeg } from "jpeg-js";
import { sha256Hex } from "./hash.ts";

/** Largest image file a dataset may name (bytes): checked before it is read. */
export const MAX_IMAGE_BYTES = 64 * 1024 * 1024;
/** Largest image a dataset may name (width × height): checked from the header before any pixel is decoded. */
export const MAX_IMAGE_PIXELS = 40_000_000;

/**
 * What kind of image are these bytes, and can it be used? The check every
 * import makes of an image a dataset names: {@link checkImage} with the
 * default bounds (size, pixel count, a full decode of PNG and JPEG), so a
 * truncated, mislabelled, fake or huge image is caught at import rather
 * than mid-run. Returns the MIME type, or the reason the bytes are not a usable image.
 *
 * @example sniffImage(pngBytes) // { type: "image/png" }
 */
export function sniffImage(bytes: Uint8Array): { type: string } | { reason: string } {
  const checked = checkImage(bytes);
  return "reason" in checked ? checked : { type: checked.type };
}

/**
 * Which format do these bytes claim, and are they whole? Reads the signature
 * (PNG, JPEG, GIF, WebP, BMP) and the end marker where the format has one.
 */
function imageSignature(bytes: Uint8Array): { type: string } | { reason: string } {
  const b = bytes;
  const starts = (...sig: number[]) => sig.every((v, i) => b[i] === v);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) {
    const iend = [0x49, 0x45, 0x4e, 0x44];
    const at = b.length - 8;
    if (b.length < 45 || !iend.every((v, i) => b[at + i] === v))
      return { reason: "a truncated PNG (no IEND chunk at the end)" };
    return { type: "image/png" };
  }
  if (starts(0xff, 0xd8, 0xff)) {
    // Some encoders pad after EOI: look for it near the end.
    for (let i = b.length - 2; i >= Math.max(2, b.length - 64); i--)
      if (b[i] === 0xff && b[i + 1] === 0xd9) return { type: "image/jpeg" };
    return { reason: "a truncated JPEG (no end-of-image marker)" };
  }
  if (starts(0x47, 0x49, 0x46, 0x38))
    return b[b.length - 1] === 0x3b ? { type: "image/gif" } : { reason: "a truncated GIF" };
  if (starts(0x52, 0x49, 0x46, 0x46) && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) {
    const size = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
    return size + 8 <= b.length ? { type: "image/webp" } : { reason: "a truncated WebP" };
  }
  if (starts(0x42, 0x4d) && b.length > 26) return { type: "image/bmp" };
  return { reason: "not an image this tool can decode (expected PNG, JPEG, GIF, WebP or BMP)" };
}

/** The bytes of a `data:` URL (base64 or percent-encoded), or the reason it is not one. */
export function decodeDataUrl(url: string): Uint8Array | { reason: string } {
  const comma = url.indexOf(",");
  if (!url.startsWith("data:") || comma < 0) return { reason: "not a data URL (expected data:<type>;base64,<data>)" };
  const header = url.slice(5, comma);
  const body = url.slice(comma + 1);
  try {
    if (header.endsWith(";base64")) {
      const binary = atob(body.replace(/\s+/g, ""));
      const out = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
      return out;
    }
    return new TextEncoder().encode(decodeURIComponent(body));
  } catch {
    return { reason: "a data URL whose data is not valid base64" };
  }
}

/** The store key of these image bytes: `sha256:<64 hex>`. */
export function imageKey(bytes: Uint8Array): string {
  return `sha256:${sha256Hex(bytes)}`;
}

/**
 * Where does this image reference point inside the dataset's folder? A
 * reference is a relative path; one that is empty, absolute (`/x`, `C:\\x`,
 * `\\\\host\\x`), a URL (`file:`, `http:`), holds a NUL, or climbs out of
 * the folder with `..` is refused with the reason. Returns the path's
 * segments, `.` and inner `..` resolved (the platform reader joins them to
 * its folder, and must still refuse links that leave it).
 *
 * @example imageRefPath("img/../scene-1.png") // { segments: ["scene-1.png"] }
 * @example imageRefPath("../outside/secret.png") // { reason: "… leaves the dataset's folder …" }
 */
export function imageRefPath(ref: string): { segments: string[] } | { reason: string } {
  const shown = JSON.stringify(ref.length > 80 ? `${ref.slice(0, 77)}…` : ref);
  if (ref === "") return { reason: "the image path is empty" };
  if (ref.includes("\u0000")) return { reason: `image path ${shown} holds a NUL character` };
  if (/^[\\/]/.test(ref) || /^[A-Za-z]:/.test(ref))
    return { reason: `image path ${shown} is absolute; paths are relative to the dataset's folder` };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(ref))
    return { reason: `image path ${shown} is a URL; give a path relative to the dataset's folder, or a data: URL` };
  const segments: string[] = [];
  for (const part of ref.split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (!segments.length) return { reason: `image path ${shown} leaves the dataset's folder (through '..')` };
      segments.pop();
    } else segments.push(part);
  }
  if (!segments.length) return { reason: `image path ${shown} names the dataset's folder itself, not a file` };
  return { segments };
}

/** An image's width and height as its header declares them, or why they cannot be read. */
export function imageDimensions(
  bytes: Uint8Array,
  type: string,
): { width: number; height: number } | { reason: string } {
  const b = bytes;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const need = (n: number) => b.length >= n;
  switch (type) {
    case "image/png":
      // IHDR is the first chunk: width and height right after its type.
      if (!need(24) || String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!) !== "IHDR")
        return { reason: "a PNG without its IHDR header" };
      return { width: view.getUint32(16), height: view.getUint32(20) };
    case "image/gif":
      if (!need(10)) return { reason: "a truncated GIF" };
      return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
    case "image/bmp": {
      if (!need(26)) return { reason: "a truncated BMP" };
      return { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
    }
    case "image/webp": {
      if (!need(30)) return { reason: "a truncated WebP" };
      const chunk = String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!);
      if (chunk === "VP8X")
        return {
          width: 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)),
          height: 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16)),
        };
      if (chunk === "VP8L") {
        const bits = view.getUint32(21, true);
        return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
      }
      if (chunk === "VP8 ")
        return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
      return { reason: `a WebP with an unknown '${chunk}' chunk` };
    }
    case "image/jpeg": {
      // Walk the marker segments to the first start-of-frame, which holds height then width.
      let at = 2;
      while (at + 9 < b.length) {
        if (b[at] !== 0xff) return { reason: "a JPEG whose markers are broken" };
        const marker = b[at + 1]!;
        if (marker === 0xff) {
          at++;
          continue;
        }
        const length = view.getUint16(at + 2);
        if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
          return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
        at += 2 + length;
      }
      return { reason: "a JPEG without a frame header" };
    }
  }
  return { reason: `not an image this tool can decode (${type})` };
}

/**
 * Are these bytes an image this tool can use, whole and within bounds? Sniffs
 * the format (see {@link sniffImage}), reads the declared size and refuses
 * more than `maxPixels` before decoding anything, then decodes PNG and JPEG
 * completely (a corrupt or fake body is caught here, not mid-run); GIF, WebP
 * and BMP are checked by their headers and end markers. Returns the type and
 * size, or the reason.
 *
 * @example checkImage(pngBytes) // { type: "image/png", width: 48, height: 48 }
 */
export function checkImage(
  bytes: Uint8Array,
  options: { readonly maxPixels?: number; readonly maxBytes?: number } = {},
): { type: string; width: number; height: number } | { reason: string } {
  const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  if (bytes.length > maxBytes)
    return { reason: `${bytes.length} bytes, over the ${maxBytes}-byte limit for one image` };
  const sniffed = imageSignature(bytes);
  if ("reason" in sniffed) return sniffed;
  const size = imageDimensions(bytes, sniffed.type);
  if ("reason" in size) return size;
  const { width, height } = size;
  if (width < 1 || height < 1) return { reason: `an image of ${width}×${height} pixels (empty)` };
  if (width * height > maxPixels)
    return {
      reason: `${width}×${height} pixels, over the ${maxPixels >= 1e6 ? `${+(maxPixels / 1e6).toFixed(1)}-megapixel` : `${maxPixels}-pixel`} limit for one image`,
    };
  try {
    if (sniffed.type === "image/png") {
      const png = decodePng(bytes);
      if (png.width !== width || png.height !== height) return { reason: "a PNG whose pixels do not match its header" };
    } else if (sniffed.type === "image/jpeg") {
      const jpeg = decodeJpeg(bytes, {
        useTArray: true,
        tolerantDecoding: false,
        maxResolutionInMP: maxPixels / 1e6,
        maxMemoryUsageInMB: Math.ceil((maxPixels * 4) / (1024 * 1024)) + 64,
      });
      if (jpeg.width !== width || jpeg.height !== height)
        return { reason: "a JPEG whose pixels do not match its header" };
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      reason: `a ${sniffed.type.slice(6).toUpperCase()} that does not decode (${why.length > 100 ? `${why.slice(0, 97)}…` : why})`,
    };
  }
  return { type: sniffed.type, width, height };
}
