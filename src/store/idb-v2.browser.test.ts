import { openDB } from "idb";
import { expect, it } from "vitest";
import { IdbStore } from "./idb.browser.ts";
import type { RunRecord } from "./types.ts";

const run = (id: string, cases: number): RunRecord => ({
  id,
  kind: "eval",
  dataset: "d",
  model: "m",
  fingerprint: "f",
  status: "running",
  startedAt: `2026-12-01T00:00:0${cases % 10}Z`,
  config: {
    eval: "e",
    cases: Array.from({ length: cases }, (_, i) => ({ id: `c${i}`, hash: "h" })),
    fingerprint: { caseHashes: { c0: "h" } },
  },
});

it("a version-1 database upgrades in place: its runs are kept and get heads", async () => {
  const name = `upgrade-${crypto.randomUUID()}`;
  const v1 = await openDB(name, 1, {
    upgrade(db) {
      for (const [store, keyPath] of [
        ["datasets", "id"],
        ["casePages", ["datasetId", "page"]],
        ["caseMeta", "datasetId"],
        ["images", "hash"],
        ["runs", "id"],
        ["items", ["runId", "index"]],
        ["progress", "runId"],
        ["events", ["runId", "seq"]],
        ["traces", ["runId", "caseId", "repeat", "name", "chunk"]],
        ["scores", ["runId", "name"]],
      ] as const)
        db.createObjectStore(store, { keyPath: keyPath as string | string[] });
    },
  });
  await v1.put("runs", run("old", 3));
  v1.close();

  const store = await IdbStore.open(name);
  try {
    expect(await store.getRun("old")).toEqual(run("old", 3));
    const [head] = await store.runHeads();
    expect(head).toMatchObject({ id: "old", caseCount: 3, config: { eval: "e", fingerprint: {} } });
    expect(head!.config).not.toHaveProperty("cases");
  } finally {
    await store.close();
    await IdbStore.destroy(name);
  }
});

it("heads follow every change to a run: create, update, delete, import", async () => {
  const name = `heads-${crypto.randomUUID()}`;
  const store = await IdbStore.open(name);
  try {
    await store.createRun(run("a", 2));
    await store.createRun(run("b", 5));
    expect((await store.runHeads()).map((h) => [h.id, h.caseCount])).toEqual([
      ["b", 5],
      ["a", 2],
    ]);
    await store.updateRun("a", { status: "finished", summary: { pass: { mean: 1 } } });
    expect((await store.runHeads({ status: "finished" })).map((h) => [h.id, h.summary])).toEqual([
      ["a", { pass: { mean: 1 } }],
    ]);
    const exported = await store.exportRun("b");
    await store.deleteRun("b");
    expect((await store.runHeads()).map((h) => h.id)).toEqual(["a"]);
    await store.importRun(exported);
    expect((await store.runHeads()).map((h) => h.id)).toEqual(["b", "a"]);
  } finally {
    await store.close();
    await IdbStore.destroy(name);
  }
});

it("a large append checks for stored items with one read, and still refuses one already stored", async () => {
  const name = `bulk-${crypto.randomUUID()}`;
  const store = await IdbStore.open(name);
  const item = (index: number) => ({
    runId: "a",
    caseId: `c${index}`,
    repeat: 0,
    index,
    output: "yes",
    passed: true,
    checks: [],
    latencyMs: 1,
  });
  try {
    await store.createRun(run("a", 1000));
    await store.appendItems("a", [item(500)], { done: 1, total: 1000, updatedAt: "2026-12-01T00:00:00Z" });
    const many = Array.from({ length: 1000 }, (_, i) => item(i));
    await expect(store.appendItems("a", many, { done: 1000, total: 1000, updatedAt: "x" })).rejects.toThrow(
      "appendItems(): item 500 of run 'a' is already stored; each item is judged once",
    );
    expect(await store.items("a")).toHaveLength(1);
    await store.appendItems(
      "a",
      many.filter((i) => i.index !== 500),
      { done: 1000, total: 1000, updatedAt: "x" },
    );
    expect((await store.items("a")).map((i) => i.index)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  } finally {
    await store.close();
    await IdbStore.destroy(name);
  }
});
