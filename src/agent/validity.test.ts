import { expect, it } from "vitest";
import { validity } from "./bench/validity.ts";

// Short seeded slices of `npm run bench:validity` (which runs ≥ 200 seeds a setting, with Monte Carlo errors).
const seeds = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

it("a planted signal with a real effect is SUPPORTED across a batch of seeds (n = 600, log-odds 1 per SD)", async () => {
  const t = await validity(seeds(100, 10));
  expect(t.plantedSupported / t.runs).toBeGreaterThanOrEqual(0.9);
  expect(t.noiseSupported).toBeLessThanOrEqual(1);
});

it("a modest numeric effect (log-odds 0.5 per SD) is found at n = 600: screen, then confirm on the frozen family only", async () => {
  const t = await validity(seeds(300, 6), { effect: 0.5 });
  expect(t.plantedSupported).toBeGreaterThanOrEqual(4);
});

it("pure-noise columns: runs confirming any of them stay near α (≤ 3 of 15 holds with probability > 0.99 at 5%)", async () => {
  const t = await validity(seeds(500, 15), { effect: 0 });
  expect(t.noiseTried).toBe(15 * 13);
  expect(t.runsWithFalseSupport).toBeLessThanOrEqual(3);
  // M2's e-values on noise average at most 1 (up to sampling)
  expect(t.noiseESum / t.noiseSignals).toBeLessThan(1.1);
});

it("clustered nulls (clusters of 5, random intercept SD 2, half the columns constant within clusters) hold their level", async () => {
  const t = await validity(seeds(700, 4), { effect: 0, clusterSize: 5, clusterSd: 2, noise: 12 });
  expect(t.noiseSignals).toBeGreaterThan(250);
  // a case-level test rejected 20–24% of such columns at 5%; the cluster permutation test holds 5%
  expect(t.noiseP05 / t.noiseSignals).toBeLessThan(0.09);
  expect(t.noiseESum / t.noiseSignals).toBeLessThan(1.1);
  expect(t.runsWithFalseSupport).toBeLessThanOrEqual(1);
});

it("with clusters the planted signal is still found", async () => {
  const t = await validity(seeds(900, 4), { clusterSize: 3 });
  expect(t.plantedSupported).toBeGreaterThanOrEqual(3);
});
