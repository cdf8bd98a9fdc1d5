import { describe, expect, it } from "vitest";
import { opComparisonLines, opKernelTimes, profileEventsInText } from "./op-profile.ts";

const kernel = (name: string, op: string, dur: number) => ({
  cat: "Node",
  name: `${name}_kernel_time`,
  dur,
  args: { op_name: op },
});

describe("opKernelTimes", () => {
  it("takes each node's median over its later runs and sums the nodes of one operator type", () => {
    const events = [
      // conv1: warm-up 500, then 30, 32, 28 → the last half [32, 28] (sorted 28, 32) → median index 1: 32
      kernel("conv1", "Conv", 500),
      kernel("conv1", "Conv", 30),
      kernel("conv1", "Conv", 32),
      kernel("conv1", "Conv", 28),
      kernel("conv2", "Conv", 10),
      kernel("conv2", "Conv", 10),
      kernel("gelu", "Gelu", 7),
      { cat: "Session", name: "model_run", dur: 900 },
      { cat: "Node", name: "conv1_fence_before", dur: 1, args: { op_name: "Conv" } },
    ];
    expect(opKernelTimes(events)).toEqual(
      new Map([
        ["Conv", 42],
        ["Gelu", 7],
      ]),
    );
    // All of conv1's runs: 28, 30, 32, 500 → the upper middle value, 32.
    expect(opKernelTimes(events, 1).get("Conv")).toBe(32 + 10);
  });

  it("refuses a tail outside (0, 1]", () => {
    expect(() => opKernelTimes([], 0)).toThrow("opKernelTimes: tail must be in (0, 1], got 0");
  });
});

describe("profileEventsInText", () => {
  it("reads one event per line, with or without its trailing comma, and skips other lines", () => {
    const text =
      '[\n{"cat":"Node","name":"a_kernel_time","dur":3},\nnot json\n{"cat":"Session","name":"x"}\n{broken}\n]';
    expect(profileEventsInText(text)).toEqual([
      { cat: "Node", name: "a_kernel_time", dur: 3 },
      { cat: "Session", name: "x" },
    ]);
  });
});

describe("opComparisonLines", () => {
  it("lists operator types by the page's time, with the ratio and the totals", () => {
    const lines = opComparisonLines(
      new Map([
        ["Gelu", 400],
        ["Conv", 600],
      ]),
      new Map([
        ["Conv", 80],
        ["Gelu", 40],
        ["Cast", 1],
      ]),
    );
    expect(lines.map((l) => l.replace(/\s+/g, " "))).toEqual([
      "Conv 600 µs vs 80 µs → 7.50×",
      "Gelu 400 µs vs 40 µs → 10.00×",
      "Cast 0 µs vs 1 µs → 0.00×",
      "all kernels 1000 µs vs 121 µs → 8.26×",
    ]);
  });
});
