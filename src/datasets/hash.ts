import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

const encoder = new TextEncoder();
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
  if (typeof data !== "string") return bytesToHex(sha256(data));
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  if (data.length * 3 > scratch.length) {
    if (data.length * 3 > 1 << 20) return bytesToHex(sha256(encoder.encode(data)));
    scratch = new Uint8Array(data.length * 3);
  }
  const { written } = encoder.encodeInto(data, scratch);
  return bytesToHex(sha256(scratch.subarray(0, written)));
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
