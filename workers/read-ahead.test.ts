import { describe, expect, it } from "vitest";
import { readingAhead } from "./read-ahead.ts";

/** A batch reader that records each call's keys and answers `<key>!` (or fails a call holding a key of `failing`). */
function recorder(failing: readonly string[] = []) {
  const calls: string[][] = [];
  const readMany = async (keys: readonly string[]) => {
    calls.push([...keys]);
    const bad = keys.find((k) => failing.includes(k));
    if (bad) throw new Error(`cannot read ${bad}`);
    return keys.map((k) => `${k}!`);
  };
  return { calls, readMany };
}

describe("readingAhead", () => {
  it("reads the keys in batches, one call each, the next batch while half of this one is still to be asked", async () => {
    const { calls, readMany } = recorder();
    const image = readingAhead(["a", "b", "c", "d", "e"], readMany, 2);
    expect(await image("a")).toBe("a!");
    expect(calls).toEqual([["a", "b"]]);
    expect(await image("b")).toBe("b!");
    expect(calls).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
    expect(await image("c")).toBe("c!");
    expect(await image("d")).toBe("d!");
    expect(await image("e")).toBe("e!");
    expect(calls).toEqual([["a", "b"], ["c", "d"], ["e"]]);
  });

  it("reads again, alone, a key asked a second time, and a key it was not told of", async () => {
    const { calls, readMany } = recorder();
    const image = readingAhead(["a", "b"], readMany, 4);
    await image("a");
    await image("a");
    expect(await image("z")).toBe("z!");
    expect(calls).toEqual([["a", "b"], ["a"], ["z"]]);
  });

  it("never reads the keys before the first one asked (a resumed run skips what it judged)", async () => {
    const { calls, readMany } = recorder();
    const image = readingAhead(["a", "b", "c", "d"], readMany, 8);
    await image("c");
    expect(calls).toEqual([["c", "d"]]);
  });

  it("lets go of what was read ahead and passed over: a key asked after all is read again", async () => {
    const { calls, readMany } = recorder();
    const image = readingAhead(["a", "b", "c", "d", "e", "f"], readMany, 4);
    await image("a"); // a..d read
    await image("e"); // b..d passed over; e and f read
    expect(await image("b")).toBe("b!");
    expect(calls).toEqual([["a", "b", "c", "d"], ["e", "f"], ["b"]]);
  });

  it("reads a key once even when the order names it twice", async () => {
    const { calls, readMany } = recorder();
    const image = readingAhead(["a", "b", "a", "c"], readMany, 4);
    await image("a");
    expect(calls).toEqual([["a", "b", "c"]]);
  });

  it("a batch that fails fails the asks of its keys, and goes unreported while nobody asks", async () => {
    const { readMany } = recorder(["d"]);
    const image = readingAhead(["a", "b", "c", "d"], readMany, 2);
    expect(await image("a")).toBe("a!");
    // b's ask starts the batch [c, d], which fails; nobody asks for c or d: no unhandled rejection fails this test.
    expect(await image("b")).toBe("b!");
    await new Promise((done) => setTimeout(done, 10));
    await expect(image("c")).rejects.toThrow("cannot read d");
  });

  it("refuses a batch that is not a whole number ≥ 1", () => {
    expect(() => readingAhead([], async () => [], 0)).toThrow(
      "readingAhead(): batch must be a whole number ≥ 1, got 0",
    );
    expect(() => readingAhead([], async () => [], 1.5)).toThrow("got 1.5");
  });
});
