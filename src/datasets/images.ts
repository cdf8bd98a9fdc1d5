import { sha256Hex } from "./hash.ts";

/**
 * What kind of image are these bytes, and are they whole? Reads the
 * signature (PNG, JPEG, GIF, WebP, BMP) and the end marker where the format
 * has one, so a truncated or mislabelled file is caught at import rather than
 * mid-run. Returns the MIME type, or the reason the bytes are not an image.
 *
 * @example sniffImage(pngBytes) // { type: "image/png" }
 */
export function sniffImage(bytes: Uint8Array): { type: string } | { reason: string } {
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
