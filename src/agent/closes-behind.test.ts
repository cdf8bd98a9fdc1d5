import { describe, expect, it } from "vitest";
import { ClosesBehind } from "./closes-behind.ts";

/** A promise settled by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe("ClosesBehind", () => {
  it("waits for every close it took, including one taken while it waited", async () => {
    const closes = new ClosesBehind();
    const first = deferred();
    const second = deferred();
    closes.add(first.promise);
    let settled = false;
    const waiting = closes.settled().then(() => (settled = true));
    closes.add(second.promise);
    first.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(false);
    second.resolve();
    await waiting;
    expect(settled).toBe(true);
    expect(() => closes.check()).not.toThrow();
  });

  it("keeps the first failure for check(), never as an unhandled rejection, and still waits for the rest", async () => {
    const closes = new ClosesBehind();
    const slow = deferred();
    closes.add(Promise.reject(new Error("disk full")));
    closes.add(Promise.reject(new Error("later")));
    closes.add(slow.promise);
    await new Promise((done) => setTimeout(done, 0)); // an unhandled rejection would be reported by now
    expect(() => closes.check()).toThrow("disk full");
    let settled = false;
    const waiting = closes.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    slow.resolve();
    await waiting;
    expect(() => closes.check()).toThrow("disk full");
  });
});
