import { describe, expect, it } from "vitest";
import { settledStatus, step } from "./bench-steps.ts";

describe("step", () => {
  it("says when it starts, while it still runs, and when it ends", async () => {
    const said: string[] = [];
    const value = await step(
      "waiting on the page",
      () => new Promise<number>((done) => setTimeout(() => done(7), 60)),
      (t) => said.push(t),
      20,
    );
    expect(value).toBe(7);
    expect(said[0]).toMatch(/waiting on the page…$/);
    expect(said.some((t) => /still waiting on the page \(\d+ s\)$/.test(t))).toBe(true);
    expect(said.at(-1)).toMatch(/waiting on the page: done in \d+ s$/);
  });

  it("names the step in a failure, so a timeout says what it waited for", async () => {
    const failing = step(
      "the engine check",
      () => Promise.reject(new Error("Timeout 300000ms exceeded")),
      () => {},
    );
    await expect(failing).rejects.toThrow(/^the engine check: Timeout 300000ms exceeded \(after \d+ s\)$/);
  });

  it("stops its once-a-minute line when it ends", async () => {
    const said: string[] = [];
    await step(
      "quick",
      async () => 1,
      (t) => said.push(t),
      5,
    );
    await new Promise((done) => setTimeout(done, 30));
    expect(said.filter((t) => t.includes("still"))).toEqual([]);
  });

  it("refuses a step with no name", async () => {
    await expect(step(" ", async () => 1)).rejects.toThrow(/name what the step does/);
  });
});

describe("settledStatus", () => {
  it("reads the states an investigation ends in, and nothing else", () => {
    expect(settledStatus(" finished ")).toBe("finished");
    expect(settledStatus("failed")).toBe("failed");
    expect(settledStatus("cancelled")).toBe("cancelled");
    expect(settledStatus("interrupted")).toBe("interrupted");
    expect(settledStatus("running")).toBeUndefined();
    expect(settledStatus(null)).toBeUndefined();
  });
});
