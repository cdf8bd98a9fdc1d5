import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { FileStore } from "../store/files.node.ts";
import { defineEvaluator } from "./evaluator.ts";
import { contains } from "./evaluators/contains.ts";
import { exact } from "./evaluators/exact.ts";
import { judge } from "./evaluators/judge.ts";
import { yesNo } from "./evaluators/yes-no.ts";
import { gate, Gate } from "./gate.ts";
import { ScriptedModel } from "./testing.ts";
import { loadRun, rescore, resolveBaseline, runEval, trialSeed } from "./run.ts";

const cases: FailureCase[] = Array.from({ length: 10 }, (_, i) => ({
  id: `q${i}`,
  input: { prompt: i === 9 ? "boom" : `question ${i}` },
  expected: i % 2 ? "yes" : "no",
  tags: i === 0 ? ["critical"] : [],
  cluster: `img${Math.floor(i / 2)}`,
  status: "active",
  meta: {},
}));

/** `store` with some of its methods replaced (a slow or failing disk). */
function withMethods(
  store: FileStore,
  replaced: Partial<Pick<FileStore, "appendItems" | "createRun" | "updateRun">>,
): FileStore {
  return new Proxy(store, {
    get: (target, key) =>
      (replaced as Record<PropertyKey, unknown>)[key] ??
      (Reflect.get(target, key) as unknown as () => unknown)?.bind?.(target),
  });
}

let dir: string;
let store: FileStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-run-"));
  store = await FileStore.open(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("runEval", () => {
  it("generates and judges every case × repeat, stores it, and summarises", async () => {
    const model = new ScriptedModel((p) => (p.endsWith("3") ? "no" : p.match(/[13579]$/) ? "yes ." : "no"));
    const broken = defineEvaluator({
      name: "broken",
      check: ({ row }) => {
        if (row.id === "q2") throw new Error("cannot judge q2");
        return { passed: true };
      },
    });
    const progress: number[] = [];
    const { run, summary } = await runEval({
      store,
      dataset: { id: "toy", cases },
      model,
      evaluators: [yesNo(), broken],
      repeats: 2,
      cluster: true,
      generation: { temperature: 0.5, maxNewTokens: 3, seed: 1 },
      onProgress: (p) => progress.push(p.done),
    });
    expect(model.calls).toHaveLength(20);
    // each trial has its own seed, stable across runs
    expect(new Set(model.calls.map((c) => c.seed)).size).toBe(20);
    expect(progress.at(-1)).toBe(20);
    expect(run.status).toBe("finished");
    expect(run.evalKey).toBe("toy:yesNo+broken");
    expect(await store.items(run.id)).toHaveLength(20);
    expect((await store.getRun(run.id))!.status).toBe("finished");
    // q9's model errored (2 trials); q2's broken check errored (2 trials)
    expect(summary).toMatchObject({ cases: 10, trials: 20, errored: 4, errorRate: 0.2, repeats: 2 });
    const q2 = run.cases.get("q2")!.trials[0]!;
    expect(q2.checks["broken"]).toMatchObject({ errored: true, error: "cannot judge q2" });
    expect(q2.checks["yesNo"]).toMatchObject({ errored: false, passed: true });
    expect(run.cases.get("q9")!.trials[0]).toMatchObject({ errored: true, error: "out of memory" });
    // pass: q0..q8 minus q2 (errored) with q3 wrong → 7 of 8 cases pass; clustered by image
    expect(summary.pass).toMatchObject({ n: 8, mean: 7 / 8, method: "clustered" });
    expect(summary.metrics["yesNo"]).toMatchObject({ n: 9, mean: 8 / 9 });
    expect(summary.metrics["yesNo"]!.aggregate).toMatchObject({ accuracy: 16 / 18 });
    expect(summary.passHatK).toEqual({ k: 2, value: 7 / 8 });
    expect(summary.flaky).toMatchObject({ count: 0 });
    expect(summary.fingerprint).toMatchObject({
      evaluators: { yesNo: yesNo().version, broken: broken.version },
      generation: { temperature: 0.5, maxNewTokens: 3, seed: 1, repeats: 2 },
      model: { key: "scripted" },
    });
    expect(Object.keys(summary.fingerprint.caseHashes)).toHaveLength(10);
    const loaded = await loadRun(store, run.id);
    expect(loaded.cases.get("q3")!.trials.map((t) => t.passed)).toEqual([false, false]);
  });

  it("is cancellable and resumes from the first unjudged item, judging each exactly once", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"), 2);
    const first = await runEval({
      store,
      dataset: { id: "toy", cases },
      model,
      evaluators: [yesNo()],
      repeats: 3,
      concurrency: 2,
      signal: controller.signal,
      onProgress: (p) => p.done >= 11 && controller.abort(),
    });
    expect(first.run.status).toBe("cancelled");
    const kept = (await store.items(first.run.id)).length;
    expect(kept).toBeGreaterThanOrEqual(11);
    expect(kept).toBeLessThan(30);
    // what a run returns is what it stored, in index order
    expect(first.items).toEqual(await store.items(first.run.id));
    const again = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"));
    const second = await runEval({
      store,
      dataset: { id: "toy", cases },
      model: again,
      evaluators: [yesNo()],
      repeats: 3,
      resume: first.run.id,
    });
    expect(second.run.status).toBe("finished");
    expect(again.calls).toHaveLength(30 - kept);
    const items = await store.items(first.run.id);
    expect(items.map((i) => i.index)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // the resumed run returns every item, those it read back included
    expect(second.items).toEqual(items);
    expect((await store.progress(first.run.id))!.done).toBe(30);
    // without a declared seed, a trial's seed comes from the run id: the resumed trials drew what they would have
    const expected = cases.flatMap((c) => [0, 1, 2].map((r) => trialSeed(`run:${first.run.id}`, c.id, r)));
    expect(new Set([...model.calls, ...again.calls].map((c) => c.seed))).toEqual(new Set(expected));
    // a different plan cannot resume it
    await expect(
      runEval({
        store,
        dataset: { id: "toy", cases },
        model: again,
        evaluators: [exact()],
        repeats: 3,
        resume: first.run.id,
      }),
    ).rejects.toThrow(
      /different plan: the eval is 'toy:exact' where the run's is 'toy:yesNo'; evaluator 'yesNo' is absent where the run's is version [0-9a-f]+; evaluator 'exact' is version [0-9a-f]+ where the run's is absent\. Resume it/,
    );
  });

  it("holds the run's lock for its whole life: a second writer of the same run is refused before judging anything", async () => {
    const slow = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"), 5);
    const other = await FileStore.open(dir); // a second process on the same store
    const first = runEval({ store, dataset: { id: "toy", cases }, model: slow, evaluators: [yesNo()], runId: "r" });
    while (!(await other.runLockHolder("r"))) await new Promise((r) => setTimeout(r, 2));
    const second = new ScriptedModel(() => "yes");
    const refused = await runEval({
      store: other,
      dataset: { id: "toy", cases },
      model: second,
      evaluators: [yesNo()],
      resume: "r",
    }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: "RunLockedError", runId: "r" });
    expect((refused as Error).message).toMatch(
      /run 'r' already has a writer: this process \(pid \d+\), writing run 'r'/,
    );
    expect(second.calls).toHaveLength(0);
    expect((await first).run.status).toBe("finished");
    expect(await other.runLockHolder("r")).toBeUndefined();
    expect((await store.items("r")).map((i) => i.index)).toEqual(Array.from({ length: 10 }, (_, i) => i));

    // A caller that holds the lock already (the page) passes it in; runEval keeps it held afterwards.
    const lock = await store.lockRun("held");
    const { run } = await runEval({ store, dataset: { id: "toy", cases }, model: second, evaluators: [yesNo()], lock });
    expect(run.id).toBe("held");
    expect(await other.runLockHolder("held")).toEqual(expect.any(String));
    await lock.release();
    await expect(
      runEval({ store, dataset: { id: "toy", cases }, model: second, evaluators: [yesNo()], lock, runId: "x" }),
    ).rejects.toThrow("runEval(): the lock given is for run 'held', not for 'x'");
  });

  it("with closeBehind, returns once every item is stored and records the run's end behind, keeping the lock until then", async () => {
    const model = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"));
    const other = await FileStore.open(dir); // a second process on the same store
    /** runEval on a store whose "finished" status write first waits for `finishing` (or throws what it throws). */
    const endingWith = async (runId: string, finishing: () => Promise<void>) => {
      let closed: Promise<void> | undefined;
      const updateRun: FileStore["updateRun"] = async (id, changes) => {
        if (changes.status === "finished") await finishing();
        return store.updateRun(id, changes);
      };
      const result = await runEval({
        store: withMethods(store, { updateRun }),
        dataset: { id: "toy", cases },
        model,
        evaluators: [yesNo()],
        runId,
        closeBehind: (c) => (closed = c),
      });
      return { ...result, closed: closed! };
    };
    let letFinish!: () => void;
    const finishing = new Promise<void>((done) => (letFinish = done));
    const { run, items, closed } = await endingWith("behind", () => finishing);
    expect(run.status).toBe("finished");
    expect(items).toHaveLength(10);
    // Returned with every item stored, the run not yet marked finished, and its writer lock still held.
    expect((await store.items("behind")).map((i) => i.index)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect((await store.getRun("behind"))!.status).toBe("running");
    expect(await other.runLockHolder("behind")).toEqual(expect.any(String));
    letFinish();
    await closed;
    expect((await store.getRun("behind"))!).toMatchObject({ status: "finished", summary: expect.any(Object) });
    expect((await store.events("behind")).map((e) => e.type)).toEqual(["eval.plan", "eval.finished"]);
    expect(await other.runLockHolder("behind")).toBeUndefined();

    // A store that fails to record the end rejects `closed` (not runEval), and lets the lock go all the same.
    const failed = await endingWith("behind-2", () => Promise.reject(new Error("disk full")));
    await expect(failed.closed).rejects.toThrow("disk full");
    expect((await store.getRun("behind-2"))!.status).toBe("running");
    expect(await other.runLockHolder("behind-2")).toBeUndefined();
  });

  it("writes behind the judging: a slow store batches the items judged meanwhile, each stored once; a failed write fails the run", async () => {
    const writes: number[][] = [];
    let slowDone = 0;
    const slow = withMethods(store, {
      appendItems: async (runId, items, progress) => {
        writes.push(items.map((i) => i.index));
        // Each write takes as long as several trials: the trials go on meanwhile.
        await new Promise((r) => setTimeout(r, 15));
        await store.appendItems(runId, items, progress);
        slowDone = progress.done;
      },
    });
    const model = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"), 2);
    const progress: number[] = [];
    const { run } = await runEval({
      store: slow,
      dataset: { id: "toy", cases },
      model,
      evaluators: [yesNo()],
      repeats: 3,
      onProgress: (p) => progress.push(p.done),
    });
    expect(run.status).toBe("finished");
    expect(writes.length).toBeLessThan(30); // batched: fewer writes than items
    expect(writes.flat()).toEqual(Array.from({ length: 30 }, (_, i) => i)); // in order, each once
    expect(slowDone).toBe(30);
    // progress counts stored items only, and only goes up
    expect(progress.at(-1)).toBe(30);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect((await store.items(run.id)).map((i) => i.index)).toEqual(Array.from({ length: 30 }, (_, i) => i));

    let calls = 0;
    const failing = withMethods(store, {
      appendItems: async (runId, items, p) => {
        if (++calls === 2) throw new Error("disk full");
        await store.appendItems(runId, items, p);
      },
    });
    const model2 = new ScriptedModel(() => "yes", 2);
    await expect(
      runEval({ store: failing, dataset: { id: "toy", cases }, model: model2, evaluators: [yesNo()], runId: "f" }),
    ).rejects.toThrow("disk full");
    expect((await store.getRun("f"))!.status).toBe("failed");
    // judging stopped soon after the failed write, and what the first write held is kept
    expect(model2.calls.length).toBeLessThan(10);
    expect((await store.progress("f"))!.done).toBe((await store.items("f")).length);
  });

  it("judges while the run is being created, writes no item before it is stored, and leaves a run it could not create alone", async () => {
    const order: string[] = [];
    const model = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"));
    // A store slow to create the run (an IndexedDB round trip): it goes on only once the model has been asked.
    const slowCreate = withMethods(store, {
      createRun: async (record) => {
        for (let i = 0; i < 200 && model.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
        order.push(`created after ${model.calls.length} trial(s)`);
        return store.createRun(record);
      },
      appendItems: async (...args) => {
        order.push(`items of ${(await store.getRun(args[0])) ? "a stored" : "an unknown"} run`);
        return store.appendItems(...args);
      },
    });
    const progress: number[] = [];
    const { run } = await runEval({
      store: slowCreate,
      dataset: { id: "toy", cases },
      model,
      evaluators: [yesNo()],
      runId: "overlap",
      onProgress: (p) => progress.push(p.done),
    });
    expect(run.status).toBe("finished");
    expect(order[0]).toMatch(/^created after [1-9]\d* trial\(s\)$/);
    expect(order.slice(1).every((o) => o === "items of a stored run")).toBe(true);
    expect(progress[0]).toBe(0);
    expect((await store.items("overlap")).map((i) => i.index)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect((await store.events("overlap")).map((e) => e.type)).toEqual(["eval.plan", "eval.finished"]);

    // The same id again, not as a resume: refused by the store, and the finished run is left as it was.
    await expect(
      runEval({ store, dataset: { id: "toy", cases }, model, evaluators: [yesNo()], runId: "overlap" }),
    ).rejects.toThrow(/a run 'overlap' already exists/);
    expect((await store.getRun("overlap"))!.status).toBe("finished");
    expect(await store.items("overlap")).toHaveLength(10);
  });

  it("lets the thread's queued tasks in while it judges, even with a model whose answers settle at once", async () => {
    // Answers in a microtask after 1 ms of work, as a WebAssembly model runs in the page's worker: nothing in the
    // judging itself ever waits for a task.
    let judgedWhenTaskRan: number | undefined;
    const busy = new ScriptedModel((p) => {
      // A task queued as the judging starts: it runs when the judging lets the thread's tasks in.
      if (busy.calls.length === 1) setTimeout(() => (judgedWhenTaskRan = busy.calls.length), 0);
      const until = performance.now() + 1;
      while (performance.now() < until);
      return p.match(/[13579]$/) ? "yes" : "no";
    });
    const many = Array.from({ length: 200 }, (_, i) => ({ ...cases[i % 9]!, id: `m${i}` }));
    const { run } = await runEval({ store, dataset: { id: "many", cases: many }, model: busy, evaluators: [yesNo()] });
    expect(run.status).toBe("finished");
    // Within the first slices (25 ms of judging each), not after all 200 trials.
    expect(judgedWhenTaskRan).toBeLessThan(100);
  });

  it("rescore judges recorded outputs again beside the old verdicts; judges are refused", async () => {
    const model = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes ." : "no ."));
    const { run } = await runEval({ store, dataset: { id: "toy", cases }, model, evaluators: [exact()] });
    expect(run.cases.get("q1")!.trials[0]!.passed).toBe(false); // "yes ." is not exactly "yes"
    const before = await store.items(run.id);
    const re = await rescore(store, run.id, [yesNo(), contains(".")], { cases });
    expect(model.calls).toHaveLength(10);
    expect(re.run.id).not.toBe(run.id);
    expect(re.run.evalKey).toBe(run.evalKey);
    expect((await store.getRun(re.run.id))!.config["rescoreOf"]).toBe(run.id);
    expect(re.run.cases.get("q1")!.trials[0]).toMatchObject({ passed: true, output: "yes ." });
    expect(re.run.cases.get("q9")!.trials[0]).toMatchObject({ errored: true, error: "out of memory" });
    expect(await store.items(run.id)).toEqual(before);
    const j = judge(async () => "PASS", "r");
    await expect(rescore(store, run.id, [j], { cases })).rejects.toThrow(/a judge needs a new run/);
    const edited = cases.map((c) => (c.id === "q4" ? { ...c, expected: "yes" } : c));
    await expect(rescore(store, run.id, [yesNo()], { cases: edited })).rejects.toThrow(/case 'q4' changed/);
  });

  it("two runs draw independent samples unless a seed is declared", async () => {
    const seeds = async (seed?: number) => {
      const model = new ScriptedModel(() => "yes");
      await runEval({
        store,
        dataset: { id: "toy", cases },
        model,
        evaluators: [yesNo()],
        generation: { temperature: 1, ...(seed !== undefined ? { seed } : {}) },
      });
      return model.calls.map((c) => c.seed);
    };
    expect(await seeds()).not.toEqual(await seeds());
    expect(await seeds(7)).toEqual(await seeds(7));
  });

  it("'latest' is the last finished run of the same eval before this one", async () => {
    const model = new ScriptedModel((p) => (p.match(/[13579]$/) ? "yes" : "no"));
    const opts = { store, dataset: { id: "toy", cases }, model, evaluators: [yesNo()] };
    let t = Date.parse("2026-11-30T10:00:00Z");
    const now = () => new Date((t += 1000));
    const a = await runEval({ ...opts, now });
    await runEval({ ...opts, evaluators: [exact()], now }); // another eval
    const b = await runEval({ ...opts, now });
    const base = await resolveBaseline(store, b.run, "latest");
    expect(base.id).toBe(a.run.id);
    const verdict = gate(b.run, Gate({ baseline: "latest", tolerance: 0.1 }), base);
    expect(verdict.comparison!.tests[0]).toMatchObject({ regressed: 0, fixed: 0 });
    await expect(resolveBaseline(store, a.run, "latest")).rejects.toThrow(/no finished run of eval/);
  });
});
