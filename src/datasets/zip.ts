import { Unzip, UnzipInflate, type AsyncFlateStreamHandler, type UnzipDecoder } from "fflate";
import { Decompress } from "fzstd";
import { concatBytes } from "../core/bytes.ts";

/** One entry of a zip archive: its name and bytes, or why they could not be read. */
export type ZipEntry =
  | { readonly name: string; readonly bytes: Uint8Array; readonly error?: undefined }
  | { readonly name: string; readonly bytes?: undefined; readonly error: string };

/** The most an entry may hold once decompressed, by default (a JSON document this large cannot become one string anyway). */
export const MAX_ENTRY_BYTES = 256 * 1024 * 1024;

export interface ZipReadOptions {
  /** Which entries to give back (default: all); the others are decompressed and dropped. */
  readonly wanted?: (name: string) => boolean;
  /** Entries larger than this once decompressed come back as an error (default `MAX_ENTRY_BYTES`). */
  readonly maxEntryBytes?: number;
}

/** Does this look like the start of a zip archive (a local file header)? */
export function isZip(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

/** Zstandard entries (method 93, as Python's zipfile writes them; as Inspect writes them now), streamed through fzstd. */
class UnzipZstd implements UnzipDecoder {
  static readonly compression = 93;
  ondata: AsyncFlateStreamHandler = () => {};
  private readonly decoder = new Decompress((data, final) =>
    this.ondata(null, data as Uint8Array<ArrayBuffer>, Boolean(final)),
  );
  push(chunk: Uint8Array, final: boolean): void {
    try {
      this.decoder.push(chunk, final);
    } catch (error) {
      this.ondata(error as Error & { code: number }, new Uint8Array(), true);
    }
  }
}

/**
 * What entries does this zip archive hold? Reads the archive as a stream,
 * local header after local header (stored, deflate and zstd entries; zip64
 * sizes; data descriptors), so only the entry being read is in memory, never
 * the whole archive. Yields each wanted entry whole once its last byte has
 * come; an entry that cannot be decompressed, is too large once
 * decompressed, or is cut short by the end of the file comes back with the
 * reason instead, and the entries around it are unaffected. A name written
 * twice comes twice, in archive order (readers of Inspect logs let the last one win).
 *
 * @example for await (const entry of zipEntries(chunks(file.stream()), { wanted: (n) => n.startsWith("samples/") })) …
 */
export async function* zipEntries(
  source: AsyncIterable<Uint8Array | string>,
  options: ZipReadOptions = {},
): AsyncGenerator<ZipEntry> {
  const wanted = options.wanted ?? (() => true);
  const limit = options.maxEntryBytes ?? MAX_ENTRY_BYTES;
  const ready: ZipEntry[] = [];
  const open = new Set<string>();
  const unzip = new Unzip((file) => {
    const name = file.name;
    if (!wanted(name)) {
      // Unstarted entries would keep their compressed bytes buffered: start them and drop what they give.
      file.ondata = () => {};
      file.start();
      return;
    }
    const parts: Uint8Array[] = [];
    let size = 0;
    let failed = false;
    open.add(name);
    file.ondata = (error, data, final) => {
      if (failed) return;
      if (error) {
        failed = true;
        open.delete(name);
        ready.push({ name, error: `could not be decompressed (${error.message})` });
        return;
      }
      size += data.length;
      if (size > limit) {
        failed = true;
        open.delete(name);
        parts.length = 0;
        ready.push({ name, error: `is larger than ${formatBytes(limit)} once decompressed` });
        return;
      }
      if (data.length) parts.push(data);
      if (final) {
        open.delete(name);
        ready.push({ name, bytes: parts.length === 1 ? parts[0]! : concatBytes(parts) });
      }
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  unzip.register(UnzipZstd);
  const encoder = new TextEncoder();
  for await (const chunk of source) {
    unzip.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk, false);
    yield* ready.splice(0);
  }
  try {
    unzip.push(new Uint8Array(), true);
  } catch {
    // fflate throws when the archive ends inside an entry: that entry is still open, reported below.
  }
  yield* ready.splice(0);
  for (const name of open) yield { name, error: "is cut short: the archive ends inside it (a truncated file)" };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MiB` : `${n} bytes`;
}
