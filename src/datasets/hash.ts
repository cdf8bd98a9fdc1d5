const encoder = new TextEncoder();
const DIGITS = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
const codes = new Uint16Array(64);

/** SHA-256 round constants (FIPS 180-4 §4.2.2): the first 32 bits of the cube roots of the first 64 primes. */
// prettier-ignore
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
/** The message schedule and the running state, reused by every hash (the module is single-threaded). */
const W = new Int32Array(64);
const state = new Int32Array(8);
/** The last one or two blocks of a message, with its padding. */
const tail = new Uint8Array(128);

/** Runs the compression function over the 64-byte blocks of `bytes` from `from` to `to`, updating `state`. */
function compress(bytes: Uint8Array, from: number, to: number): void {
  let h0 = state[0]!;
  let h1 = state[1]!;
  let h2 = state[2]!;
  let h3 = state[3]!;
  let h4 = state[4]!;
  let h5 = state[5]!;
  let h6 = state[6]!;
  let h7 = state[7]!;
  for (let at = from; at < to; at += 64) {
    for (let i = 0, j = at; i < 16; i++, j += 4)
      W[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15]!;
      const y = W[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (s1 + W[i - 7]! + s0 + W[i - 16]!) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  state[0] = h0;
  state[1] = h1;
  state[2] = h2;
  state[3] = h3;
  state[4] = h4;
  state[5] = h5;
  state[6] = h6;
  state[7] = h7;
}

/**
 * SHA-256 (FIPS 180-4) of the first `length` bytes of `bytes`, left in
 * `state`. One call per message, no allocation: whole blocks are read in
 * place, only the last one or two (with the padding) are copied. Hashing
 * 100k short texts one by one is what an import does, and a general
 * streaming hasher spends as long setting up and tearing down per message
 * as it spends hashing a 500-byte case.
 */
function digest(bytes: Uint8Array, length: number): void {
  begin();
  const whole = length - (length % 64);
  compress(bytes, 0, whole);
  finish(bytes, whole, length, length);
}

/** Sets `state` to SHA-256's initial hash value. */
function begin(): void {
  state[0] = 0x6a09e667;
  state[1] = 0xbb67ae85 | 0;
  state[2] = 0x3c6ef372;
  state[3] = 0xa54ff53a | 0;
  state[4] = 0x510e527f;
  state[5] = 0x9b05688c | 0;
  state[6] = 0x1f83d9ab;
  state[7] = 0x5be0cd19;
}

/**
 * Hashes a message's last bytes (`bytes` from `from` to `to`, less than a
 * block) and its padding, for a message of `length` bytes in all.
 */
function finish(bytes: Uint8Array, from: number, to: number, length: number): void {
  const rest = to - from;
  tail.set(bytes.subarray(from, to));
  tail[rest] = 0x80;
  const end = rest < 56 ? 64 : 128;
  tail.fill(0, rest + 1, end);
  // The message length in bits, big-endian in the last 8 bytes (lengths here stay below 2^53 bits).
  const high = Math.floor(length / 0x20000000);
  const low = (length << 3) >>> 0;
  tail[end - 8] = high >>> 24;
  tail[end - 7] = high >>> 16;
  tail[end - 6] = high >>> 8;
  tail[end - 5] = high;
  tail[end - 4] = low >>> 24;
  tail[end - 3] = low >>> 16;
  tail[end - 2] = low >>> 8;
  tail[end - 1] = low;
  compress(tail, 0, end);
}

/**
 * The first `chars` hex characters of the digest in `state`, in one flat
 * string. Building it by `+=` leaves a chain of cons-strings behind each hash:
 * a 100k-case import that keeps one hash per case would hold ~100 MB of them.
 */
function hex(chars: number): string {
  for (let i = 0; i < chars; i++) {
    const word = state[i >> 3]!;
    codes[i] = DIGITS[(word >>> (28 - 4 * (i & 7))) & 15]!;
  }
  return String.fromCharCode.apply(null, codes.subarray(0, chars) as unknown as number[]);
}

/** Reused for short texts, so hashing 100k ids or cases does not allocate 100k buffers. */
let scratch = new Uint8Array(4096);

/** Hashes a text (UTF-8) or bytes, leaving the digest in `state`. */
function digestOf(data: string | Uint8Array): void {
  if (typeof data !== "string") return digest(data, data.length);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  if (data.length * 3 > scratch.length) {
    if (data.length * 3 > 1 << 20) {
      const bytes = encoder.encode(data);
      return digest(bytes, bytes.length);
    }
    scratch = new Uint8Array(data.length * 3);
  }
  const { written } = encoder.encodeInto(data, scratch);
  digest(scratch, written);
}

/**
 * What is the SHA-256 of this text (UTF-8) or these bytes, as 64 lowercase hex
 * characters? Synchronous and pure JS, so sorting 100k ids by hash needs no
 * `await` and gives the same answer in Node and every browser.
 *
 * @example sha256Hex("abc") // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 */
export function sha256Hex(data: string | Uint8Array): string {
  digestOf(data);
  return hex(64);
}

/**
 * The first `chars` hex characters of the SHA-256 of this text or these bytes:
 * `sha256Hex(data).slice(0, chars)`, without building the 64-character string
 * first (what identities keep: 12 characters per case).
 *
 * @example sha256Prefix("abc", 12) // "ba7816bf8f01"
 */
export function sha256Prefix(data: string | Uint8Array, chars: number): string {
  if (!Number.isInteger(chars) || chars < 0 || chars > 64)
    throw new RangeError(`sha256Prefix(): chars must be a whole number from 0 to 64, got ${chars}`);
  digestOf(data);
  return hex(chars);
}

/**
 * The first `chars` hex characters of the SHA-256 over the UTF-8 of `texts`,
 * one after another: `sha256Prefix(texts.join(""), chars)` (the same bytes,
 * unless a text ends in half a surrogate pair that the next one completes),
 * without the joined text and its UTF-8 copy. A 100k-case dataset's version
 * hashes 8.5 MB of `"id" hash` lines so.
 *
 * @example sha256PrefixOfTexts(["a", "bc"], 12) // "ba7816bf8f01", as sha256Prefix("abc", 12)
 */
export function sha256PrefixOfTexts(texts: Iterable<string>, chars: number): string {
  if (!Number.isInteger(chars) || chars < 0 || chars > 64)
    throw new RangeError(`sha256PrefixOfTexts(): chars must be a whole number from 0 to 64, got ${chars}`);
  let buffer = new Uint8Array(1 << 16);
  let used = 0;
  let hashed = 0;
  begin();
  for (const text of texts) {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (used + text.length * 3 > buffer.length) {
      const whole = used - (used % 64);
      compress(buffer, 0, whole);
      hashed += whole;
      buffer.copyWithin(0, whole, used);
      used -= whole;
      if (used + text.length * 3 > buffer.length) {
        const bigger = new Uint8Array(2 * (used + text.length * 3));
        bigger.set(buffer.subarray(0, used));
        buffer = bigger;
      }
    }
    used += encoder.encodeInto(text, buffer.subarray(used)).written;
  }
  const whole = used - (used % 64);
  compress(buffer, 0, whole);
  finish(buffer, whole, used, hashed + used);
  return hex(chars);
}

/**
 * Where does this text fall in [0, 1), uniformly and the same on every
 * machine? The first 48 bits of its SHA-256 over 2^48: used to seal a stable
 * fraction of clusters.
 *
 * @example unitHash("cluster-7") // a number in [0, 1), always the same one
 */
export function unitHash(text: string): number {
  digestOf(text);
  return ((state[0]! >>> 0) * 0x10000 + (state[1]! >>> 16)) / 2 ** 48;
}
