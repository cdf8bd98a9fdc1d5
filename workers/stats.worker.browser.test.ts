import { proxy, wrap } from "comlink";
import { describe, expect, it } from "vitest";
import type { FailureCase } from "../src/core/index.ts";
import { calibrate, loadRun, runEval, yesNo } from "../src/evals/index.ts";
import { ScriptedModel } from "../src/evals/testing.ts";
import { pairedBootstrap, comparePaired } from "../src/stats/index.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import { compareJob, powerJob } from "./stats-jobs.ts";
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

describe("the Compare page's store-backed jobs", () => {
  const db = `evalrx-compare-test-${Date.now()}`;
  const cases: FailureCase[] = Array.from({ length: 60 }, (_, i) => ({
    id: `c${String(i).padStart(2, "0")}`,
    input: { prompt: `question ${i}` },
    expected: "yes",
    tags: [],
    status: "active",
    meta: {},
  }));
  const index = (prompt: string) => Number(prompt.split(" ")[1]);

  async function record(store: IdbStore, id: string, fails: (i: number) => boolean) {
    const model = new ScriptedModel((p) => (fails(index(p)) ? "no" : "yes"));
    await runEval({ store, dataset: { id: "toy", cases }, model, evaluators: [yesNo()], runId: id, evalKey: "toy" });
  }

  it("gate, case answers, calibrate and power in the worker equal the library's on the same runs", async () => {
    const store = await IdbStore.open(db);
    await record(store, "base", (i) => i >= 55);
    await record(store, "cand", (i) => i >= 40);
    await record(store, "base-again", (i) => i >= 55 || i === 3);
    const [base, cand, again] = await Promise.all(["base", "cand", "base-again"].map((id) => loadRun(store, id)));
    const { worker, api } = startStatsWorker();
    try {
      const steps: string[] = [];
      const result = await api.compareStored(
        db,
        "base",
        "cand",
        { tolerance: 0.03 },
        1,
        proxy((p: { step: string }) => void steps.push(p.step)),
      );
      expect(result).toEqual(
        compareJob(base!, cand!, { tolerance: 0.03 }, { baseline: "scripted", candidate: "scripted" }),
      );
      expect(result.gate?.verdict).toBe("fail");
      expect(steps).toEqual(["reading run base", "reading run cand", "comparing (the gate's tests)"]);
      expect(await api.caseOutputsStored(db, "base", "cand", ["c40"])).toEqual([
        { id: "c40", baseline: [{ output: "yes", verdict: "pass" }], candidate: [{ output: "no", verdict: "fail" }] },
      ]);
      expect(await api.calibrateStored(db, ["base", "base-again"], { target: 0.05, simulations: 20 }, 1)).toEqual(
        calibrate([base!, again!], { target: 0.05, simulations: 20 }),
      );
      const pw = await api.powerStored(db, "base", { drop: 0.1, tolerance: 0.03 }, 1);
      expect(pw.atRuns).toEqual(powerJob(base!, { drop: 0.1, tolerance: 0.03 }).atRuns);
    } finally {
      worker.terminate();
      store.close();
    }
  });

  it("a newer request supersedes an older one of the same kind, and a run that is not there is named", async () => {
    const { worker, api } = startStatsWorker();
    try {
      const older = api.compareStored(db, "base", "cand", { tolerance: 0.03 }, 10);
      const newer = api.compareStored(db, "base", "cand", { tolerance: 0.05 }, 11);
      await expect(older).rejects.toThrow("this compare was superseded by a newer one");
      expect((await newer).tolerance).toBe(0.05);
      await expect(api.compareStored(db, "base", "gone", { tolerance: 0.03 }, 12)).rejects.toThrow(
        "no run 'gone' in this browser's store (it may have been deleted); pick another run",
      );
      await expect(api.compareStored(db, "base", "base", { tolerance: 0.03 }, 13)).rejects.toThrow(
        "run 'base' cannot be compared with itself: pick two different runs",
      );
    } finally {
      worker.terminate();
    }
  });
});

describe("a running run's case table", () => {
  it("read again as the run moves on (only the items stored since), equals a fresh read of the whole run", async () => {
    const db = `evalrx-tables-test-${Date.now()}`;
    const cases: FailureCase[] = Array.from({ length: 30 }, (_, i) => ({
      id: `c${String(i).padStart(2, "0")}`,
      input: { prompt: `question ${i}` },
      expected: "yes",
      tags: [],
      status: "active",
      meta: {},
    }));
    const gate = () => {
      let open!: () => void;
      return { opened: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
    };
    const gates = new Map([
      [10, gate()],
      [20, gate()],
    ]);
    /** Answers after the gate at its case opens, so the run waits there with the cases before it stored. */
    class Gated extends ScriptedModel {
      override async generate(...args: Parameters<ScriptedModel["generate"]>): Promise<string> {
        await gates.get(Number(args[0].prompt.split(" ")[1]))?.opened;
        return super.generate(...args);
      }
    }
    const store = await IdbStore.open(db);
    const judged = async (n: number) => {
      while (((await store.progress("live"))?.done ?? 0) < n) await new Promise((r) => setTimeout(r, 10));
    };
    const model = new Gated((p) => (Number(p.split(" ")[1]) % 3 ? "yes" : "no"));
    const run = runEval({ store, dataset: { id: "toy", cases }, model, evaluators: [yesNo()], runId: "live" });
    const live = startStatsWorker();
    const table = (api: StatsWorkerApi | ReturnType<typeof wrap<StatsWorkerApi>>) =>
      api.caseTable(db, "live", { verdict: "all" }, 0, 100);
    const fresh = async () => {
      const other = startStatsWorker();
      try {
        return await table(other.api);
      } finally {
        other.worker.terminate();
      }
    };
    try {
      await judged(10);
      const first = await table(live.api);
      expect(first.judged).toBe(10);
      expect(first.counts.pending).toBe(20);
      gates.get(10)!.open();
      await judged(20);
      const second = await table(live.api);
      expect(second.judged).toBe(20);
      expect(second.counts).toEqual({ pass: 13, fail: 7, flaky: 0, error: 0, pending: 10 });
      expect(second).toEqual(await fresh());
      gates.get(20)!.open();
      await run;
      const last = await table(live.api);
      expect(last.judged).toBe(30);
      expect(last.summary?.pass?.n).toBe(30);
      expect(last).toEqual(await fresh());
    } finally {
      live.worker.terminate();
      store.close();
    }
  });
});
