import { describe, expect, it } from "vitest";
import { keptReads } from "./kept-reads.ts";

/** A reader that records its reads and answers a `size`-byte array per key (or fails for keys in `failing`). */
function recorder(size = 10, failing: Set<string> = new Set()) {
  const reads: string[] = [];
  const read = async (key: string) => {
    reads.push(key);
    if (failing.has(key)) throw new Error(`cannot read ${key}`);
    return new Uint8Array(size).fill(key.charCodeAt(0));
  };
  return { reads, read };
}

const bytes = (b: Uint8Array) => b.byteLength;

describe("keptReads", () => {
  it("reads a key once and answers its later asks with the same value", async () => {
    const { reads, read } = recorder();
    const image = keptReads(read, bytes, 1000);
    const first = await image("a");
    expect(await image("a")).toBe(first);
    await image("b");
    expect(await image("a")).toBe(first);
    expect(reads).toEqual(["a", "b"]);
  });

  it("shares one read among asks that arrive while it is under way", async () => {
    const { reads, read } = recorder();
    const image = keptReads(read, bytes, 1000);
    const [x, y] = await Promise.all([image("a"), image("a")]);
    expect(x).toBe(y);
    expect(reads).toEqual(["a"]);
  });

  it("keeps at most maxBytes, dropping the least recently asked", async () => {
    const { reads, read } = recorder(10);
    const image = keptReads(read, bytes, 25);
    await image("a");
    await image("b");
    await image("a"); // a is now the most recent
    await image("c"); // 30 bytes: b goes
    await image("a");
    await image("b");
    expect(reads).toEqual(["a", "b", "c", "b"]);
  });

  it("does not keep a failed read: the next ask reads again", async () => {
    const failing = new Set(["a"]);
    const { reads, read } = recorder(10, failing);
    const image = keptReads(read, bytes, 1000);
    await expect(image("a")).rejects.toThrow("cannot read a");
    failing.clear();
    expect((await image("a"))[0]).toBe("a".charCodeAt(0));
    expect(reads).toEqual(["a", "a"]);
  });

  it("refuses a negative size", () => {
    expect(() => keptReads(recorder().read, bytes, -1)).toThrow(/maxBytes must be ≥ 0, got -1/);
  });
});
