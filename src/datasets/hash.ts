import { sha256 } from "@noble/hashes/sha2.js";

const encoder = new TextEncoder();
const DIGITS = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
const codes = new Uint16Array(64);

/**
 * A digest as lowercase hex in one flat string. Building it by `+=` (as
 * `bytesToHex` does where `Uint8Array.prototype.toHex` is missing, e.g. Node
 * 20) leaves a chain of 31 cons-strings behind each hash: a 100k-case import
 * that keeps one hash per case would hold ~100 MB of them.
 */
function hex(digest: Uint8Array): string {
  for (let i = 0; i < digest.length; i++) {
    codes[2 * i] = DIGITS[digest[i]! >> 4]!;
    codes[2 * i + 1] = DIGITS[digest[i]! & 15]!;
  }
  return String.fromCharCode.apply(null, codes.subarray(0, 2 * digest.length) as unknown as number[]);
}
/** Reused for short texts, so hashing 100k ids or cases does not allocate 100k buffers. */
let scratch = new Uint8Array(4096);

/**
 * What is the SHA-256 of this text (UTF-8) or these bytes, as 64 lowercase hex
 * characters? Synchronous and pure JS, so sorting 100k ids by hash needs no
 * `await` and gives the same answer in Node and every browser.
 *
 * @example sha256Hex("abc") // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 */
export function sha256Hex(data: string | Uint8Array): string {
  if (typeof data !== "string") return hex(sha256(data));
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  if (data.length * 3 > scratch.length) {
    if (data.length * 3 > 1 << 20) return hex(sha256(encoder.encode(data)));
    scratch = new Uint8Array(data.length * 3);
  }
  const { written } = encoder.encodeInto(data, scratch);
  return hex(sha256(scratch.subarray(0, written)));
}

/**
 * Where does this text fall in [0, 1), uniformly and the same on every
 * machine? The first 48 bits of its SHA-256 over 2^48: used to seal a stable
 * fraction of clusters.
 *
 * @example unitHash("cluster-7") // a number in [0, 1), always the same one
 */
export function unitHash(text: string): number {
  return parseInt(sha256Hex(text).slice(0, 12), 16) / 2 ** 48;
}
