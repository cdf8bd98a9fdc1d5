import { describe, expect, it } from "vitest";
import { KeptPromises } from "./kept-promises.ts";

const bytes = (n: number) => new Uint8Array(n);
const size = (b: Uint8Array) => b.byteLength;

describe("KeptPromises", () => {
  it("keeps a read, shares it while pending, and counts its bytes once it has arrived", async () => {
    const kept = new KeptPromises(size, 100);
    let arrive!: (b: Uint8Array) => void;
    const read = kept.keep("a", new Promise((resolve) => (arrive = resolve)));
    expect(kept.use("a")).toBe(read);
    expect(kept.held).toEqual({ count: 1, bytes: 0 });
    arrive(bytes(40));
    await read;
    expect(kept.held).toEqual({ count: 1, bytes: 40 });
    expect(kept.use("b")).toBeUndefined();
  });

  it("lets the least recently used go first once past the budget", async () => {
    const kept = new KeptPromises(size, 100);
    await kept.keep("a", Promise.resolve(bytes(40)));
    await kept.keep("b", Promise.resolve(bytes(40)));
    await kept.use("a"); // a is now the most recently used
    await kept.keep("c", Promise.resolve(bytes(40)));
    expect([kept.use("a"), kept.use("b"), kept.use("c")].map((p) => p !== undefined)).toEqual([true, false, true]);
    expect(kept.held).toEqual({ count: 2, bytes: 80 });
  });

  it("lets a failed read go, and never counts a read dropped before it arrived", async () => {
    const kept = new KeptPromises(size, 100);
    await kept.keep("bad", Promise.reject(new Error("gone"))).catch(() => undefined);
    expect(kept.use("bad")).toBeUndefined();
    const late = kept.keep("late", Promise.resolve(bytes(30)));
    kept.drop("late");
    await late;
    expect(kept.held).toEqual({ count: 0, bytes: 0 });
  });

  it("refuses a negative budget", () => {
    expect(() => new KeptPromises(size, -1)).toThrow(/maxBytes must be ≥ 0/);
  });
});
