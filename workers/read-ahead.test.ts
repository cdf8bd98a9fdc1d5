import { describe, expect, it } from "vitest";
import { readingAhead } from "./read-ahead.ts";

/** A reader that records what it was asked to read and answers `<key>!` (or fails for keys in `failing`). */
function recorder(failing: readonly string[] = []) {
  const reads: string[] = [];
  const read = async (key: string) => {
    reads.push(key);
    if (failing.includes(key)) throw new Error(`cannot read ${key}`);
    return `${key}!`;
  };
  return { reads, read };
}

describe("readingAhead", () => {
  it("reads the next keys while the first is asked for, and reads each of them once", async () => {
    const { reads, read } = recorder();
    const image = readingAhead(["a", "b", "c", "d", "e"], read, 2);
    expect(await image("a")).toBe("a!");
    expect(reads).toEqual(["a", "b", "c"]);
    expect(await image("b")).toBe("b!");
    expect(await image("c")).toBe("c!");
    expect(reads).toEqual(["a", "b", "c", "d", "e"]);
    expect(await image("d")).toBe("d!");
    expect(await image("e")).toBe("e!");
    expect(reads).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("reads again a key asked a second time, and a key it was not told of", async () => {
    const { reads, read } = recorder();
    const image = readingAhead(["a", "b"], read, 1);
    await image("a");
    await image("a");
    expect(await image("z")).toBe("z!");
    expect(reads).toEqual(["a", "b", "a", "z"]);
  });

  it("never reads ahead the keys before the first one asked (a resumed run skips what it judged)", async () => {
    const { reads, read } = recorder();
    const image = readingAhead(["a", "b", "c", "d"], read, 1);
    await image("c");
    expect(reads).toEqual(["c", "d"]);
  });

  it("drops what was read ahead and passed over, so no more than `ahead` results are held", async () => {
    const { reads, read } = recorder();
    const image = readingAhead(["a", "b", "c", "d", "e"], read, 2);
    await image("a"); // b and c read ahead
    await image("d"); // b and c passed over; e read ahead
    await image("b"); // asked after all: read again, not handed a stale copy kept forever
    expect(reads).toEqual(["a", "b", "c", "d", "e", "b"]);
  });

  it("a read ahead that fails fails its own ask, and goes unreported while nobody asks", async () => {
    const { read } = recorder(["b", "d"]);
    const image = readingAhead(["a", "b", "c", "d"], read, 3);
    expect(await image("a")).toBe("a!");
    await expect(image("b")).rejects.toThrow("cannot read b");
    expect(await image("c")).toBe("c!");
    // "d" failed ahead and is never asked for: no unhandled rejection fails this test.
    await new Promise((done) => setTimeout(done, 10));
  });

  it("with ahead 0 it reads only what is asked", async () => {
    const { reads, read } = recorder();
    const image = readingAhead(["a", "b"], read, 0);
    await image("a");
    expect(reads).toEqual(["a"]);
  });

  it("refuses an ahead that is not a whole number ≥ 0", () => {
    expect(() => readingAhead([], async () => 0, -1)).toThrow(
      "readingAhead(): ahead must be a whole number ≥ 0, got -1",
    );
    expect(() => readingAhead([], async () => 0, 1.5)).toThrow("got 1.5");
  });
});
