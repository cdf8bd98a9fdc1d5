import { ShareError } from "./errors.ts";

/** Reads a byte stream whole. */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
  }
  return join(chunks, total);
}

function join(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * What are these bytes as a raw DEFLATE stream (RFC 1951, no zlib or gzip
 * header)? Through the platform's `CompressionStream`, which the page and
 * Node (≥ 20) both have, so a link made by the CLI and one made in the page
 * are the same format.
 *
 * @example await deflateRaw(new TextEncoder().encode("aaaaaaaaaa")) // 4 bytes: Uint8Array [75, 76, 132, 1, 0]… (zlib's choice)
 */
export async function deflateRaw(bytes: Uint8Array): Promise<Uint8Array> {
  return readAll(new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("deflate-raw")));
}

/**
 * The bytes a raw DEFLATE stream unpacks to, refusing to unpack more than
 * `limit` bytes: the stream is read chunk by chunk and cancelled as soon as
 * the bound is passed, so a decompression bomb (a few KB that unpack to
 * gigabytes) costs at most `limit` bytes of memory. A damaged stream
 * (truncated, bad codes, junk after its end) is refused too.
 *
 * @example await inflateRawBounded(await deflateRaw(bytes), 1 << 20) // bytes, or a ShareError("too-large-unpacked")
 */
export async function inflateRawBounded(bytes: Uint8Array, limit: number): Promise<Uint8Array> {
  if (!(Number.isSafeInteger(limit) && limit > 0))
    throw new RangeError(`inflateRawBounded(): limit must be a positive whole number of bytes, got ${limit}`);
  const reader = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        throw new ShareError(
          "too-large-unpacked",
          `the data unpacks to more than ${limit.toLocaleString("en")} bytes, the most a share may hold: it is damaged or was made to exhaust memory (a decompression bomb), and was not read`,
        );
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ShareError) throw error;
    throw new ShareError(
      "corrupt",
      `the data does not unpack (${error instanceof Error ? error.message : String(error)}): the link or file was cut or changed on the way`,
      { cause: error },
    );
  }
  return join(chunks, total);
}
