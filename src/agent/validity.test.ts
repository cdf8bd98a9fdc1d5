import { expect, it } from "vitest";
import { validity } from "./bench/validity.ts";

const seeds = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

it("a planted signal with a real effect is SUPPORTED across a batch of seeds (n = 600, log-odds 1 per SD)", async () => {
  const t = await validity(seeds(100, 12));
  console.log(
    `planted SUPPORTED in ${t.plantedSupported}/${t.runs} runs; noise SUPPORTED ${t.noiseSupported}/${t.noiseTried}`,
  );
  expect(t.plantedSupported / t.runs).toBeGreaterThanOrEqual(0.9);
  expect(t.noiseSupported).toBe(0);
});

it("pure-noise columns are never SUPPORTED across a batch of seeds at the planted sample size", async () => {
  const t = await validity(seeds(500, 20), { effect: 0 });
  console.log(
    `null logs: ${t.noiseSupported}/${t.noiseTried} noise columns SUPPORTED (rate ${(t.noiseSupported / t.noiseTried).toFixed(4)}); ${t.runsWithFalseSupport}/${t.runs} runs with any`,
  );
  expect(t.noiseTried).toBe(20 * 13);
  expect(t.noiseSupported).toBe(0);
});

it("with clusters the planted signal is still found and noise still is not", async () => {
  const t = await validity(seeds(900, 6), { clusterSize: 3 });
  expect(t.plantedSupported).toBeGreaterThanOrEqual(5);
  expect(t.noiseSupported).toBe(0);
});
