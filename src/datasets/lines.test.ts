import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { concatBytes } from "../core/bytes.ts";
import { readLines, type Line } from "./lines.ts";

/** What each line should read as: the file split at LF, a CR before it dropped, a BOM on line 1 dropped, each line decoded alone. */
function reference(bytes: Uint8Array): Line[] {
  const out: Line[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    let nl = bytes.indexOf(10, start);
    if (nl < 0) nl = bytes.length;
    let piece = bytes.subarray(start, nl);
    if (piece.at(-1) === 13) piece = piece.subarray(0, -1);
    if (line === 1 && piece[0] === 0xef && piece[1] === 0xbb && piece[2] === 0xbf) piece = piece.subarray(3);
    try {
      out.push({ line, text: decoder.decode(piece) });
    } catch {
      out.push({ line, error: "not valid UTF-8; re-save the file as UTF-8" });
    }
    start = nl + 1;
  }
  return out;
}

async function read(chunks: Uint8Array[]): Promise<Line[]> {
  const out: Line[] = [];
  async function* source() {
    yield* chunks;
  }
  for await (const batch of readLines(source())) out.push(...batch);
  return out;
}

/** The bytes cut at the given offsets. */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const at = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const o of [...at, bytes.length]) {
    if (o > from) chunks.push(bytes.slice(from, o));
    from = Math.max(from, o);
  }
  return chunks;
}

describe("readLines", () => {
  const encoder = new TextEncoder();
  // Lines of text (multi-byte characters, CR, empty lines), and a few byte runs that are not UTF-8.
  const piece = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 12 }).map((t) => encoder.encode(t)),
    fc.constantFrom(
      Uint8Array.of(10),
      Uint8Array.of(13, 10),
      Uint8Array.of(0xef, 0xbb, 0xbf),
      Uint8Array.of(0xff),
      Uint8Array.of(0xe2, 0x82),
      encoder.encode("é☕𝄞"),
    ),
  );
  const file = fc.array(piece, { maxLength: 40 }).map((parts) => concatBytes(parts));

  it("reads every line the same however the file is cut into chunks", async () => {
    await fc.assert(
      fc.asyncProperty(file, fc.array(fc.nat(), { maxLength: 8 }), async (bytes, offsets) => {
        expect(await read(cut(bytes, offsets))).toEqual(reference(bytes));
      }),
      { numRuns: 400 },
    );
  });

  it("names the one line that is not UTF-8 among whole lines read in one piece", async () => {
    const bytes = new Uint8Array([...encoder.encode("\uFEFF{}\r\na\nb"), 0xff, ...encoder.encode("\n\nc é\nlast")]);
    expect(await read([bytes])).toEqual([
      { line: 1, text: "{}" },
      { line: 2, text: "a" },
      { line: 3, error: "not valid UTF-8; re-save the file as UTF-8" },
      { line: 4, text: "" },
      { line: 5, text: "c é" },
      { line: 6, text: "last" },
    ]);
  });
});
