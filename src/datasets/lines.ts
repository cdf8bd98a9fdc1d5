import { concatBytes } from "../core/bytes.ts";
import type { ImportSource } from "./types.ts";

/** One line of a text file: its text, or why it could not be decoded. */
export type Line =
  | { readonly line: number; readonly text: string; readonly error?: undefined }
  | { readonly line: number; readonly text?: undefined; readonly error: string };

/**
 * What are the lines of this file, each numbered and decoded on its own?
 * Splits raw bytes at LF (dropping a CR before it, so CRLF, LF and a mix all
 * work), strips a UTF-8 BOM, and decodes each line strictly: a line that is
 * not valid UTF-8 comes back as an error naming that line, and its neighbours
 * are unaffected. Yields batches (one per chunk read) so 100k lines cost
 * 100k iterations of a plain loop, not 100k awaits. Never holds more than the
 * current chunk and the one line being assembled.
 *
 * @example for await (const batch of readLines(file.stream())) for (const l of batch) …
 */
export async function* readLines(source: ImportSource): AsyncGenerator<Line[]> {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let lineNo = 0;
  let pending: Uint8Array[] = [];
  let pendingText = "";
  const decode = (bytes: Uint8Array): Line => {
    lineNo++;
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 13) end--;
    let start = 0;
    if (lineNo === 1 && end >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
    try {
      return { line: lineNo, text: decoder.decode(bytes.subarray(start, end)) };
    } catch {
      return { line: lineNo, error: "not valid UTF-8; re-save the file as UTF-8" };
    }
  };
  const fromText = (text: string): Line => {
    lineNo++;
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return { line: lineNo, text };
  };
  for await (const chunk of chunks(source)) {
    const out: Line[] = [];
    if (typeof chunk === "string") {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf("\n", start);
        if (nl < 0) {
          pendingText += chunk.slice(start);
          break;
        }
        out.push(fromText(pendingText + chunk.slice(start, nl)));
        pendingText = "";
        start = nl + 1;
      }
    } else {
      const first = chunk.indexOf(10);
      if (first >= 0) {
        // The line the last chunk left unfinished (or the file's first line, which may carry a BOM), alone.
        const piece = chunk.subarray(0, first);
        out.push(decode(pending.length ? concatBytes([...pending, piece]) : piece));
        pending = [];
        // The whole lines after it in one decode: one call per chunk instead of one per line. Only when
        // some line is not UTF-8 are they decoded one by one, so that line alone is named.
        const last = chunk.lastIndexOf(10);
        if (last > first) {
          const middle = chunk.subarray(first + 1, last);
          let text: string | undefined;
          try {
            text = decoder.decode(middle);
          } catch {
            for (let start = 0; start <= middle.length;) {
              let nl = middle.indexOf(10, start);
              if (nl < 0) nl = middle.length;
              out.push(decode(middle.subarray(start, nl)));
              start = nl + 1;
            }
          }
          if (text !== undefined)
            for (let start = 0; ;) {
              const nl = text.indexOf("\n", start);
              const end = nl < 0 ? text.length : nl;
              lineNo++;
              out.push({
                line: lineNo,
                text:
                  end > start && text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end),
              });
              if (nl < 0) break;
              start = nl + 1;
            }
        }
      }
      const rest = first < 0 ? 0 : chunk.lastIndexOf(10) + 1;
      // Copy: a stream may reuse its buffer for the next chunk.
      if (rest < chunk.length) pending.push(Uint8Array.prototype.slice.call(chunk, rest));
    }
    if (out.length) yield out;
  }
  // A last line without its newline (a truncated file) is still a line.
  if (pending.length) yield [decode(concatBytes(pending))];
  else if (pendingText) yield [fromText(pendingText)];
}

/** The source as a sequence of chunks, whatever its shape. */
export async function* chunks(source: ImportSource): AsyncGenerator<Uint8Array | string> {
  if (typeof source === "string" || source instanceof Uint8Array) yield source;
  else if (source instanceof ArrayBuffer) yield new Uint8Array(source);
  else if (typeof (source as ReadableStream).getReader === "function") {
    // A web stream: read it directly (not every browser makes it async-iterable).
    const reader = (source as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else if (Symbol.asyncIterator in Object(source)) yield* source as AsyncIterable<Uint8Array | string>;
  else throw new Error("readLines(): expected text, bytes or an async iterable of chunks (e.g. file.stream())");
}

/** The whole source as bytes (for formats that need the file at once: CSV, Parquet, JSON logs). */
export async function readAll(source: ImportSource): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const encoder = new TextEncoder();
  for await (const chunk of chunks(source)) parts.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
  return parts.length === 1 ? parts[0]! : concatBytes(parts);
}
