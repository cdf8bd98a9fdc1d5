import { describe, expect, it } from "vitest";
import { writeBehind } from "./write-behind.ts";

/** A write that records each batch and resolves when `release` is called. */
function gated() {
  const batches: number[][] = [];
  const waiting: (() => void)[] = [];
  const write = (batch: number[]) =>
    new Promise<void>((done) => {
      batches.push(batch);
      waiting.push(done);
    });
  const release = async () => {
    waiting.shift()?.();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { batches, write, release };
}

describe("writeBehind", () => {
  it("returns at once and writes in push order, batching what was pushed while a write ran", async () => {
    const { batches, write, release } = gated();
    const queue = writeBehind(write);
    queue.push(1);
    queue.push(2);
    queue.push(3);
    expect(batches).toEqual([[1]]); // 2 and 3 wait for the first write
    await release();
    expect(batches).toEqual([[1], [2, 3]]);
    queue.push(4);
    await release();
    await release();
    const flushed = queue.flush();
    await release();
    await flushed;
    expect(batches.flat()).toEqual([1, 2, 3, 4]);
  });

  it("flush waits for every value pushed, and for nothing when none is", async () => {
    const written: number[] = [];
    const queue = writeBehind(async (batch: number[]) => {
      await new Promise((r) => setTimeout(r, 1));
      written.push(...batch);
    });
    await queue.flush();
    for (let i = 0; i < 10; i++) queue.push(i);
    await queue.flush();
    expect(written).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("stops at a failed write: the next push and flush throw it, and nothing after it is written", async () => {
    const written: number[] = [];
    let fail = false;
    const queue = writeBehind(async (batch: number[]) => {
      await new Promise((r) => setTimeout(r, 1));
      if (fail) throw new Error("disk full");
      written.push(...batch);
    });
    queue.push(1);
    await queue.flush();
    fail = true;
    queue.push(2);
    await expect(queue.flush()).rejects.toThrow("disk full");
    expect(() => queue.push(3)).toThrow("disk full");
    await expect(queue.flush()).rejects.toThrow("disk full");
    expect(written).toEqual([1]);
  });
});
