/**
 * One buffer holding these buffers back to back (used by the line reader and the protobuf writer alike).
 *
 * @example concatBytes([Uint8Array.of(1, 2), Uint8Array.of(3)]) // Uint8Array [1, 2, 3]
 */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const chunk of chunks) size += chunk.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
