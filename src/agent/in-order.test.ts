import { describe, expect, it } from "vitest";
import { inOrder } from "./in-order.ts";

/** Resolves after `ms` of timers: work that finishes out of order when started together. */
const after = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("inOrder", () => {
  it("hands results to consume in item order however the work finishes", async () => {
    const out: string[] = [];
    await inOrder(
      [30, 5, 20, 1, 10],
      3,
      async (ms, i) => {
        await after(ms);
        return `${i}:${ms}`;
      },
      (r) => void out.push(r),
    );
    expect(out).toEqual(["0:30", "1:5", "2:20", "3:1", "4:10"]);
  });

  it("keeps at most `concurrency` pieces of work started and not yet consumed", async () => {
    let open = 0;
    let most = 0;
    await inOrder(
      Array.from({ length: 12 }, (_, i) => (i * 7) % 5),
      3,
      async (ms) => {
        most = Math.max(most, ++open);
        await after(ms);
        return ms;
      },
      () => void open--,
    );
    expect(most).toBe(3);
  });

  it("with concurrency 1 starts each piece only after the previous one was consumed (the plain loop)", async () => {
    const trail: string[] = [];
    await inOrder(
      ["a", "b", "c"],
      1,
      async (x) => {
        trail.push(`work ${x}`);
        await after(1);
        return x;
      },
      (x) => void trail.push(`consume ${x}`),
    );
    expect(trail).toEqual(["work a", "consume a", "work b", "consume b", "work c", "consume c"]);
  });

  it("throws the first failure in item order, consumes nothing after it, and lets started work finish first", async () => {
    const consumed: number[] = [];
    let finished = 0;
    const run = inOrder(
      [0, 1, 2, 3],
      3,
      async (i) => {
        await after(i === 1 ? 1 : 15);
        finished++;
        if (i === 1) throw new Error("case 1 failed");
        return i;
      },
      (i) => void consumed.push(i),
    );
    await expect(run).rejects.toThrow("case 1 failed");
    expect(consumed).toEqual([0]);
    // 0, 1 and 2 started together; 3 started once 0 was consumed, before 1's turn came: all four finished first.
    expect(finished).toBe(4);
  });

  it("lets the thread's queued tasks in while work that settles at once goes on", async () => {
    let doneWhenTaskRan: number | undefined;
    let done = 0;
    await inOrder(
      Array.from({ length: 200 }, (_, i) => i),
      1,
      async (i) => {
        // Queued as the work starts; 1 ms of work per item, answered in a microtask, as a WebAssembly model's run.
        if (i === 0) setTimeout(() => (doneWhenTaskRan = done), 0);
        const until = performance.now() + 1;
        while (performance.now() < until);
        return i;
      },
      () => void done++,
    );
    expect(done).toBe(200);
    expect(doneWhenTaskRan).toBeLessThan(100);
  });

  it("refuses a concurrency that is not a whole number ≥ 1, naming it", async () => {
    await expect(
      inOrder(
        [1],
        0,
        async (x) => x,
        () => undefined,
      ),
    ).rejects.toThrow("inOrder(): concurrency must be a whole number ≥ 1 (model calls in flight), got 0");
  });
});
