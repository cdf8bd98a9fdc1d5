import { wrap } from "comlink";
import { expect, it } from "vitest";
import { pairedBootstrap, comparePaired } from "../src/stats/index.ts";
import type { StatsWorkerApi } from "./stats.worker.ts";

function startStatsWorker() {
  const worker = new Worker(new URL("./stats.worker.ts", import.meta.url), { type: "module" });
  return { worker, api: wrap<StatsWorkerApi>(worker) };
}

it("the stats worker's pairedBootstrap equals the main thread's for the same seed", async () => {
  const { worker, api } = startStatsWorker();
  try {
    const n = 2000;
    const diffs = new Float64Array(n);
    const clusters: number[] = [];
    for (let i = 0; i < n; i++) {
      diffs[i] = ((i * 7919) % 101) / 100 - 0.45;
      clusters.push(i % 150);
    }
    const opts = { seed: 12345, replicates: 1000 };
    expect(await api.pairedBootstrap(diffs, undefined, opts)).toEqual(pairedBootstrap(diffs, undefined, opts));
    expect(await api.pairedBootstrap(diffs, clusters, opts)).toEqual(pairedBootstrap(diffs, clusters, opts));
    // The value Node computes in paired-bootstrap.test.ts: same seed, same numbers, in Chromium too.
    expect(await api.pairedBootstrap([0.1, 0.3, -0.1, 0.2, 0.4], undefined, { seed: 1 })).toEqual({
      lo: -0.06000000000000001,
      hi: 0.38,
      p: 0.030984507746126936,
    });
    const a = [0.2, 0.5, 0.9, 0.4, 0.7, 0.1];
    const b = [0.3, 0.5, 0.6, 0.8, 0.9, 0.4];
    expect(await api.comparePaired(a, b, undefined, { seed: 9 })).toEqual(comparePaired(a, b, undefined, { seed: 9 }));
  } finally {
    worker.terminate();
  }
});

it("the stats worker reports bad input with the catalog's message", async () => {
  const { worker, api } = startStatsWorker();
  try {
    await expect(api.wilson(7, 5)).rejects.toThrow("wilson(): 7 successes out of 5 trials");
    expect(await api.wilson(45, 50)).toEqual([expect.closeTo(0.7864, 4), expect.closeTo(0.9565, 4)]);
  } finally {
    worker.terminate();
  }
});
