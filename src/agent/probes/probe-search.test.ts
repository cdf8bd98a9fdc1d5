import { describe, expect, it } from "vitest";
import { seededRng } from "../../stats/rng.ts";
import { probeSearch, type ProbeFamily } from "./probe-search.ts";

const families: ProbeFamily[] = [
  { name: "a", arms: ["low", "high"] },
  { name: "b", arms: ["none"] },
];
/** Arm a:high fails 90% of the time, a:low 10%, b never. */
const rates: Record<string, number> = { "a:low": 0.1, "a:high": 0.9, "b:none": 0 };

function run(seed: number, budget = 400, generate?: (f: string, a: string) => string | undefined) {
  const noise = seededRng("test", seed);
  return probeSearch<string>({
    families,
    generate: generate ?? ((f, a) => `${f}:${a}`),
    verify: async (c) => (noise.next() >>> 0) / 2 ** 32 < rates[c]!,
    budget,
    seed,
    exploration: 0.5,
  });
}

describe("probeSearch", () => {
  it("spends its budget where the failures are", async () => {
    const r = await run(1);
    expect(r.calls).toBe(400);
    expect(r.stopped).toBe("budget");
    const high = r.arms.find((a) => a.arm === "high")!;
    expect(high.calls).toBeGreaterThan(300);
    expect(r.failures / r.calls).toBeGreaterThan(0.75);
    expect(r.found).toHaveLength(r.failures);
    expect(r.families.map((f) => f.calls).reduce((s, c) => s + c, 0)).toBe(400);
  });

  it("is the same for the same seed", async () => {
    expect(await run(3, 100)).toEqual(await run(3, 100));
  });

  it("sets aside an arm whose generator gives nothing, spending no call on it", async () => {
    const r = await run(2, 50, (f, a) => (a === "high" ? undefined : `${f}:${a}`));
    expect(r.arms.find((a) => a.arm === "high")).toMatchObject({ calls: 0, exhausted: true });
    expect(r.calls).toBe(50);
    const none = await run(2, 50, () => undefined);
    expect(none).toMatchObject({ calls: 0, stopped: "exhausted" });
  });

  it("stops between calls when aborted, and refuses a bad budget", async () => {
    const controller = new AbortController();
    const r = await probeSearch<string>({
      families,
      generate: (f, a) => `${f}:${a}`,
      verify: async () => {
        controller.abort();
        return true;
      },
      budget: 100,
      seed: 1,
      signal: controller.signal,
    });
    expect(r).toMatchObject({ calls: 1, stopped: "aborted" });
    await expect(
      probeSearch({ families, generate: () => "x", verify: async () => true, budget: 1.5, seed: 1 }),
    ).rejects.toThrow(/budget must be a whole number of model calls, got 1.5/);
  });
});
