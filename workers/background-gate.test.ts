import { describe, expect, it } from "vitest";
import { BackgroundGate } from "./background-gate.ts";

/** A promise with its resolve and reject, to hold a piece of work open until the test lets it finish. */
function held<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued promise callback run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("BackgroundGate", () => {
  it("holds a background step while asked-for work is in flight, and runs it after", async () => {
    const gate = new BackgroundGate();
    const load = held();
    const log: string[] = [];
    const work = gate.work(async () => {
      log.push("load started");
      await load.promise;
      log.push("load done");
    });
    const step = gate.step(async () => void log.push("step ran"));
    await settle();
    expect(log).toEqual(["load started"]);
    expect(gate.busy).toBe(true);
    load.resolve();
    await Promise.all([work, step]);
    expect(log).toEqual(["load started", "load done", "step ran"]);
    expect(gate.busy).toBe(false);
  });

  it("makes asked-for work that arrives during a step wait for that step only, not for the next ones", async () => {
    const gate = new BackgroundGate();
    const forward = held();
    const log: string[] = [];
    const first = gate.step(async () => {
      log.push("step 1 started");
      await forward.promise;
      log.push("step 1 done");
    });
    await settle();
    const work = gate.work(async () => void log.push("work ran"));
    const second = gate.step(async () => void log.push("step 2 ran"));
    await settle();
    expect(log).toEqual(["step 1 started"]);
    forward.resolve();
    await Promise.all([first, work, second]);
    expect(log).toEqual(["step 1 started", "step 1 done", "work ran", "step 2 ran"]);
  });

  it("waits for every overlapping piece of work before a step, nested work included", async () => {
    const gate = new BackgroundGate();
    const a = held();
    const b = held();
    const log: string[] = [];
    const outer = gate.work(async () => {
      await gate.work(async () => a.promise);
      await b.promise;
    });
    const other = gate.work(async () => a.promise);
    const step = gate.step(async () => void log.push("step ran"));
    a.resolve();
    await settle();
    expect(log).toEqual([]);
    b.resolve();
    await Promise.all([outer, other, step]);
    expect(log).toEqual(["step ran"]);
  });

  it("passes results and failures through, and a failed step or work does not wedge the gate", async () => {
    const gate = new BackgroundGate();
    await expect(gate.step(async () => Promise.reject(new Error("WebGPU failed")))).rejects.toThrow("WebGPU failed");
    await expect(gate.work(async () => Promise.reject(new Error("no such model")))).rejects.toThrow("no such model");
    const failing = held<number>();
    const step = gate.step(() => failing.promise);
    const work = gate.work(async () => 42);
    failing.reject(new Error("step failed"));
    await expect(step).rejects.toThrow("step failed");
    expect(await work).toBe(42);
    expect(await gate.step(async () => "after")).toBe("after");
    expect(gate.busy).toBe(false);
  });
});
