import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectClose, loadFixture } from "./reference.node.ts";
import { detectableDrop, pairedSampleSize, type DetectableDropInput, type SampleSizeInput } from "./sample-size.ts";

describe("pairedSampleSize and detectableDrop", () => {
  it("pairedSampleSize matches Connor's formula with SciPy's normal quantiles", () => {
    const fx = loadFixture<[SampleSizeInput], number>("pairedSampleSize");
    for (const { args, expected } of fx.cases)
      expect(pairedSampleSize(args[0]), JSON.stringify(args[0])).toBe(expected);
  });

  it("detectableDrop matches a root-finder's inverse, and throws where none is reachable", () => {
    const fx = loadFixture<[DetectableDropInput], number | null>("detectableDrop");
    for (const { args, expected } of fx.cases) {
      if (expected === null) expect(() => detectableDrop(args[0]), JSON.stringify(args[0])).toThrow(/use more cases/);
      else expectClose(detectableDrop(args[0]), expected, 1e-9, 0, JSON.stringify(args[0]));
    }
  });

  it("gives the worked examples", () => {
    expect(pairedSampleSize({ discordance: 0.2, drop: 0.1 })).toBe(155);
    expect(detectableDrop({ n: 155, discordance: 0.2 })).toBeLessThanOrEqual(0.1);
  });

  it("round-trips: the detectable drop needs at most n cases, and slightly less of a drop needs more", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 30, max: 100_000 }),
        fc.double({ min: 0.05, max: 0.9, noNaN: true }),
        fc.constantFrom(0.8, 0.9),
        (n, discordance, power) => {
          let drop: number;
          try {
            drop = detectableDrop({ n, discordance, power });
          } catch {
            return pairedSampleSize({ discordance, drop: discordance, power }) > n;
          }
          return (
            pairedSampleSize({ discordance, drop, power }) <= n + 1 &&
            pairedSampleSize({ discordance, drop: drop * 0.99, power }) > n
          );
        },
      ),
    );
  });

  it("rejects impossible plans", () => {
    expect(() => pairedSampleSize({ discordance: 0.1, drop: 0.2 })).toThrow(/exceeds discordance/);
    expect(() => pairedSampleSize({ discordance: 0.1, drop: 0 })).toThrow(/drop/);
    expect(() => detectableDrop({ n: 0, discordance: 0.2 })).toThrow(/n must be at least 1/);
  });
});
