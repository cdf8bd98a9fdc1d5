import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { importDataset } from "../datasets/index.ts";
import { yesNo } from "../evals/index.ts";
import { loadModel, REPO_ROOT } from "../models/load.node.ts";
import type { OrtModel } from "../models/ort-model.ts";
import { FileStore } from "../store/files.node.ts";
import type { RunEvent } from "./events.ts";
import { investigate } from "./investigate.ts";

/**
 * The page keeps several model calls in flight (`concurrency`, over its model workers); the CLI one. Both must
 * store the same items in the same order and reach the same outcome: run here on one model through
 * onnxruntime-node, where calls in flight interleave on one thread, so any order the loop depends on shows.
 */
const image = (ref: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));
let cases: FailureCase[] = [];
let model: OrtModel;
beforeAll(async () => {
  const imported = await importDataset(new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"))), {
    name: "pope.jsonl",
  });
  // 15 whole scenes (a scene's six questions stay together as its cluster).
  cases = imported.cases.filter((c) => Number(/(\d+)$/.exec(String(c.cluster))![1]) <= 15);
  model = await loadModel("tiny-vlm", { memo: true });
});
afterAll(() => model?.dispose());

/** The investigation both tests run: the 15 scenes, seed 1, up to L2, on `on` and into `store`. */
function demoInvestigation(store: FileStore, on: OrtModel, fingerprint: string) {
  return {
    store,
    model: on,
    dataset: { id: "pope", cases, source: "pope.jsonl", fingerprint },
    evaluators: [yesNo()],
    images: async (ref: string) => image(ref),
    protocol: { question: "What predicts the hallucinations?" },
    runId: "inv",
    seed: 1,
    maxTier: "L2" as const,
  };
}

/** What a run decided and stored, without its clock: every event's type and payload (times dropped). */
async function runWith(concurrency: number) {
  const store = await FileStore.open(mkdtempSync(join(tmpdir(), `evalrx-concurrency-${concurrency}-`)));
  const events: RunEvent[] = [];
  await investigate({
    ...demoInvestigation(store, model, "concurrency-test"),
    ...(concurrency > 1 ? { concurrency } : {}),
    sink: (e) => void events.push(e),
  });
  const clockless = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value, (k, v: unknown) => (["ts", "ms", "seconds", "timings"].includes(k) ? undefined : v)),
    );
  const listed = await store.listRuns();
  const runs = listed.map((r) => r.id).sort();
  // M5 records each candidate run's end behind the next candidate: all are finished once the investigation is.
  const unfinished = listed.filter((r) => r.status !== "finished").map((r) => `${r.id} ${r.status}`);
  const items: Record<string, unknown> = {};
  for (const id of runs)
    items[id] = (await store.items(id))
      .sort((a, b) => a.index - b.index)
      .map((i) => [i.caseId, i.output, i.passed, i.signals ?? null]);
  const probeOrder = (await store.items("inv-m1-probe")).map((i) => i.caseId);
  return { events: events.map((e) => [e.type, clockless(e.payload)]), runs, unfinished, items, probeOrder };
}

it("keeps the same items, order and outcome with several model calls in flight as with one", async () => {
  const one = await runWith(1);
  const four = await runWith(4);
  expect(four.runs).toEqual(one.runs);
  expect(one.runs.filter((r) => r.startsWith("inv-m5-")).length).toBeGreaterThan(2);
  expect(one.unfinished).toEqual([]);
  expect(four.unfinished).toEqual([]);
  expect(four.items).toEqual(one.items);
  // M1's probe records are stored in case order either way (what a resume reads back).
  expect(four.probeOrder).toEqual(cases.map((c) => c.id));
  expect(four.events).toEqual(one.events);
}, 240_000);

it("stopped during M1's probing, keeps every record probed before the stop, in case order", async () => {
  const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-probe-stop-")));
  const stop = new AbortController();
  let forwards = 0;
  // The 20th probing forward stops the run: the records before it are still on their way to the store.
  const stopping = new Proxy(model, {
    get(target, key, receiver) {
      if (key === "forward")
        return async (...args: Parameters<OrtModel["forward"]>) => {
          const trace = await target.forward(...args);
          if (++forwards === 20) stop.abort();
          return trace;
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  await expect(
    investigate({ ...demoInvestigation(store, stopping, "probe-stop-test"), signal: stop.signal }),
  ).rejects.toThrow(/cancelled/);
  const probed = (await store.items("inv-m1-probe")).map((i) => i.caseId);
  expect(probed).toEqual(cases.slice(0, 20).map((c) => c.id));
}, 120_000);
