import { describe, expect, it } from "vitest";
import { RunLockedError, StoreError } from "./errors.ts";
import { resumePoint } from "./resume.ts";
import type { DatasetRecord, ItemRecord, RunExport, RunRecord, Store, StoredCase } from "./types.ts";
import nodeExport from "./fixtures/run-export.json";

/**
 * How the contract gets a store: a fresh empty one, the same one reopened (to
 * prove writes persisted), and a second connection to the same data while the
 * first stays open (another process on the directory, another tab on the database).
 */
export interface StoreFactory {
  fresh(): Promise<Store>;
  reopen(store: Store): Promise<Store>;
  another(store: Store): Promise<Store>;
}

const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);
const PNG_KEY = "sha256:c414cd0e204de974f73753c7e28d7638e7b3691bb8b1a2bab6b25bb7fed7ce77";

export function dataset(id = "ds", caseCount = 3): DatasetRecord {
  return {
    id,
    name: `Dataset ${id}`,
    version: "0123456789ab",
    caseCount,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
  };
}

export function storedCase(datasetId: string, id: string, extra: Partial<StoredCase> = {}): StoredCase {
  return {
    datasetId,
    id,
    input: { prompt: `prompt ${id}` },
    tags: [],
    status: "active",
    meta: { n: 1 },
    hash: "aaaaaaaaaaaa",
    ...extra,
  };
}

export function run(id = "run-1", extra: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    kind: "eval",
    dataset: "ds",
    model: "tiny-vlm",
    fingerprint: "fp-1",
    status: "running",
    startedAt: "2026-01-01T00:00:00.000Z",
    config: { repeats: 1 },
    ...extra,
  };
}

export function item(runId: string, index: number, extra: Partial<ItemRecord> = {}): ItemRecord {
  return {
    runId,
    caseId: `c${index}`,
    repeat: 0,
    index,
    output: `answer ${index}`,
    passed: index % 2 === 0,
    checks: [{ name: "exact", passed: index % 2 === 0, score: index % 2 === 0 ? 1 : 0 }],
    latencyMs: 10 + index,
    signals: { entropy: index / 10 },
    ...extra,
  };
}

/** Element-wise equality without a deep-equal walk over 600k numbers. */
function sameValues(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return false;
  return true;
}

const marker = (done: number, total: number) => ({ done, total, updatedAt: "2026-01-01T00:00:01.000Z" });

/**
 * The one contract every store implementation passes (run against IndexedDB
 * in Chromium and against the file store in Node). Each test gets a fresh store.
 */
export function storeContract(name: string, factory: StoreFactory): void {
  const withStore = (title: string, body: (store: Store) => Promise<void>) =>
    it(title, async () => {
      const store = await factory.fresh();
      try {
        await body(store);
      } finally {
        await store.close();
      }
    });

  describe(`store contract: ${name}`, () => {
    describe("datasets and cases", () => {
      withStore("puts, lists, reads cases sorted by id, and replaces", async (store) => {
        await store.putDataset(dataset("ds"), [storedCase("ds", "b"), storedCase("ds", "a"), storedCase("ds", "c")]);
        await store.putDataset(dataset("other", 0), []);
        expect(await store.getDataset("ds")).toEqual(dataset("ds"));
        expect((await store.listDatasets()).map((d) => d.id)).toEqual(["ds", "other"]);
        expect((await store.cases("ds")).map((c) => c.id)).toEqual(["a", "b", "c"]);
        expect(await store.getCase("ds", "b")).toEqual(storedCase("ds", "b"));
        expect(await store.getCase("ds", "zz")).toBeUndefined();
        await store.putDataset({ ...dataset("ds"), caseCount: 1 }, [storedCase("ds", "z")]);
        expect((await store.cases("ds")).map((c) => c.id)).toEqual(["z"]);
        await store.putDataset({ ...dataset("ds"), name: "renamed" });
        expect((await store.cases("ds")).map((c) => c.id)).toEqual(["z"]);
        expect((await store.getDataset("ds"))!.name).toBe("renamed");
        expect(await store.getDataset("nope")).toBeUndefined();
      });
      withStore("addCases adds new ids only, never overwriting", async (store) => {
        await store.putDataset(dataset("ds"), [storedCase("ds", "a")]);
        expect(
          await store.addCases("ds", [storedCase("ds", "a", { expected: "changed" }), storedCase("ds", "b")]),
        ).toBe(1);
        expect(await store.addCases("ds", [storedCase("ds", "c"), storedCase("ds", "d")])).toBe(2);
        const cases = await store.cases("ds");
        expect(cases.map((c) => c.id)).toEqual(["a", "b", "c", "d"]);
        expect(cases[0]!.expected).toBeUndefined();
        await expect(store.addCases("ds", [storedCase("elsewhere", "e")])).rejects.toThrow(
          /belongs to dataset 'elsewhere'/,
        );
      });
      withStore("deleteDataset removes the record and its cases", async (store) => {
        await store.putDataset(dataset("ds"), [storedCase("ds", "a")]);
        await store.deleteDataset("ds");
        expect(await store.getDataset("ds")).toBeUndefined();
        expect(await store.cases("ds")).toEqual([]);
      });
      withStore("ids with any characters are kept apart", async (store) => {
        const ids = ["a/b", "a%2Fb", "..", "CON", "ü 1", "a.b"];
        for (const id of ids) await store.putDataset(dataset(id, 1), [storedCase(id, `${id}-case`)]);
        expect((await store.listDatasets()).map((d) => d.id).sort()).toEqual([...ids].sort());
        for (const id of ids) expect((await store.cases(id)).map((c) => c.id)).toEqual([`${id}-case`]);
      });
    });

    describe("images", () => {
      withStore("are stored once under sha256 of their bytes", async (store) => {
        expect(await store.putImage(PNG)).toBe(PNG_KEY);
        expect(await store.putImage(PNG.slice())).toBe(PNG_KEY);
        expect(await store.hasImage(PNG_KEY)).toBe(true);
        const image = await store.getImage(PNG_KEY);
        expect(image).toEqual({ hash: PNG_KEY, bytes: PNG, type: "image/png" });
        const other = `sha256:${"0".repeat(64)}`;
        expect(await store.hasImage(other)).toBe(false);
        expect(await store.getImage(other)).toBeUndefined();
        await expect(store.getImage("images/red.png")).rejects.toThrow(/not sha256/);
      });

      withStore("several are read in one call, in the order asked, undefined where none is stored", async (store) => {
        const red = await store.putImage(PNG);
        const other = `sha256:${"0".repeat(64)}`;
        const bare = red.slice("sha256:".length);
        expect(await store.getImages([other, red, bare])).toEqual([
          undefined,
          { hash: PNG_KEY, bytes: PNG, type: "image/png" },
          { hash: PNG_KEY, bytes: PNG, type: "image/png" },
        ]);
        expect(await store.getImages([])).toEqual([]);
        await expect(store.getImages([red, "images/red.png"])).rejects.toThrow(/not sha256/);
      });
    });

    describe("runs", () => {
      withStore("create, get, list by kind/dataset/status newest first, update, delete", async (store) => {
        await store.createRun(run("r1", { startedAt: "2026-01-01T00:00:00.000Z" }));
        await store.createRun(run("r2", { startedAt: "2026-01-02T00:00:00.000Z", kind: "investigation" }));
        await store.createRun(run("r3", { startedAt: "2026-01-03T00:00:00.000Z", dataset: "other" }));
        await expect(store.createRun(run("r1"))).rejects.toThrow(/already exists/);
        expect(await store.getRun("r2")).toEqual(
          run("r2", { startedAt: "2026-01-02T00:00:00.000Z", kind: "investigation" }),
        );
        expect((await store.listRuns()).map((r) => r.id)).toEqual(["r3", "r2", "r1"]);
        expect((await store.listRuns({ kind: "eval" })).map((r) => r.id)).toEqual(["r3", "r1"]);
        expect((await store.listRuns({ dataset: "ds", kind: "eval" })).map((r) => r.id)).toEqual(["r1"]);
        await store.updateRun("r1", {
          status: "finished",
          finishedAt: "2026-01-01T01:00:00.000Z",
          summary: { passRate: 0.5 },
        });
        expect((await store.listRuns({ status: "finished" })).map((r) => r.id)).toEqual(["r1"]);
        expect(await store.getRun("r1")).toMatchObject({
          status: "finished",
          summary: { passRate: 0.5 },
          model: "tiny-vlm",
        });
        await expect(store.updateRun("nope", { status: "failed" })).rejects.toThrow(/no run 'nope'/);
        await store.appendItems("r1", [item("r1", 0)], marker(1, 2));
        await store.appendEvents("r1", [{ stage: "plan", schema: 1, type: "start", payload: {} }]);
        await store.deleteRun("r1");
        expect(await store.getRun("r1")).toBeUndefined();
        expect(await store.items("r1")).toEqual([]);
        expect(await store.events("r1")).toEqual([]);
        expect(await store.progress("r1")).toBeUndefined();
      });

      withStore("items and their progress marker are written together; an item is stored once", async (store) => {
        await store.createRun(run("r"));
        await store.appendItems("r", [item("r", 1), item("r", 0)], marker(2, 5));
        await store.appendItems("r", [item("r", 2)], marker(3, 5));
        expect((await store.items("r")).map((i) => i.index)).toEqual([0, 1, 2]);
        expect(await store.items("r")).toContainEqual(item("r", 1));
        expect(await store.progress("r")).toEqual({ runId: "r", ...marker(3, 5) });
        // One duplicate in a batch rejects the whole batch: neither its items nor its marker are kept.
        await expect(store.appendItems("r", [item("r", 3), item("r", 2)], marker(5, 5))).rejects.toBeInstanceOf(
          StoreError,
        );
        expect((await store.items("r")).map((i) => i.index)).toEqual([0, 1, 2]);
        expect((await store.progress("r"))!.done).toBe(3);
        await expect(store.appendItems("r", [item("r", 4), item("r", 4)], marker(5, 5))).rejects.toThrow(
          /already stored/,
        );
        await expect(store.appendItems("nope", [item("nope", 0)], marker(1, 1))).rejects.toThrow(/no run 'nope'/);
        await expect(store.appendItems("r", [item("other", 9)], marker(1, 1))).rejects.toThrow(
          /belongs to run 'other'/,
        );
        expect((await resumePoint(store, "r", 5)).next).toBe(3);
      });

      withStore("events get consecutive sequence numbers across calls", async (store) => {
        await store.createRun(run("r"));
        const first = await store.appendEvents("r", [
          { stage: "M1", schema: 1, type: "probe", payload: { n: 1 } },
          { stage: "M1", schema: 1, type: "probe", payload: { n: 2 }, ts: "2026-01-01T00:00:00.000Z" },
        ]);
        expect(first.map((e) => e.seq)).toEqual([0, 1]);
        expect(first[1]!.ts).toBe("2026-01-01T00:00:00.000Z");
        expect(first[0]!.ts).toMatch(/^\d{4}-\d\d-\d\dT/);
        await store.appendEvents("r", [{ stage: "M2", schema: 2, type: "explore", payload: [1, 2] }]);
        const all = await store.events("r");
        expect(all.map((e) => [e.seq, e.stage, e.type])).toEqual([
          [0, "M1", "probe"],
          [1, "M1", "probe"],
          [2, "M2", "explore"],
        ]);
        expect(all[2]).toMatchObject({ runId: "r", schema: 2, payload: [1, 2] });
        expect((await store.events("r", 2)).map((e) => e.seq)).toEqual([2]);
        await expect(store.appendEvents("nope", [{ stage: "x", schema: 1, type: "x", payload: null }])).rejects.toThrow(
          /no run/,
        );
      });

      withStore(
        "traces keep typed arrays, shapes and axes; large ones round-trip; same key replaces",
        async (store) => {
          await store.createRun(run("r"));
          const big = new Float32Array(600_000).map((_, i) => Math.sin(i));
          await store.putTraces([
            {
              runId: "r",
              caseId: "c1",
              repeat: 0,
              name: "imageAttentionShare",
              data: Float32Array.of(0.5, 0.25, 0.125, 1),
              shape: [2, 2],
              axes: ["layer", "head"],
            },
            {
              runId: "r",
              caseId: "c1",
              repeat: 0,
              name: "tokenIds",
              data: Int32Array.of(-1, 2, 3),
              shape: [3],
              axes: ["position"],
            },
            {
              runId: "r",
              caseId: "c2",
              repeat: 1,
              name: "mask",
              data: Uint8Array.of(1, 0),
              shape: [2],
              axes: ["position"],
            },
            { runId: "r", caseId: "c2", repeat: 0, name: "full", data: big, shape: [600, 1000], axes: ["q", "k"] },
            {
              runId: "r",
              caseId: "c3",
              repeat: 0,
              name: "f64",
              data: Float64Array.of(Math.PI),
              shape: [1],
              axes: ["x"],
            },
          ]);
          const all = await store.traces("r");
          expect(all.map((t) => [t.caseId, t.repeat, t.name])).toEqual([
            ["c1", 0, "imageAttentionShare"],
            ["c1", 0, "tokenIds"],
            ["c2", 0, "full"],
            ["c2", 1, "mask"],
            ["c3", 0, "f64"],
          ]);
          expect(all[0]!.data).toEqual(Float32Array.of(0.5, 0.25, 0.125, 1));
          expect(all[1]!.data).toEqual(Int32Array.of(-1, 2, 3));
          expect(all[2]!.data).toBeInstanceOf(Float32Array);
          expect(sameValues(all[2]!.data, big)).toBe(true);
          expect(all[3]!.data).toEqual(Uint8Array.of(1, 0));
          expect(all[4]!.data).toEqual(Float64Array.of(Math.PI));
          expect(all[2]).toMatchObject({ shape: [600, 1000], axes: ["q", "k"] });
          await store.putTraces([
            { runId: "r", caseId: "c2", repeat: 0, name: "full", data: Float32Array.of(7), shape: [1], axes: ["x"] },
          ]);
          expect((await store.traces("r", { caseId: "c2", name: "full" }))[0]!.data).toEqual(Float32Array.of(7));
          expect((await store.traces("r", { caseId: "c1" })).map((t) => t.name)).toEqual([
            "imageAttentionShare",
            "tokenIds",
          ]);
          await expect(
            store.putTraces([
              {
                runId: "r",
                caseId: "c9",
                repeat: 0,
                name: "bad",
                data: Float32Array.of(1, 2),
                shape: [3],
                axes: ["x"],
              },
            ]),
          ).rejects.toThrow(/holds 3 values but data has 2/);
        },
      );

      withStore("scores replace by name", async (store) => {
        await store.createRun(run("r"));
        await store.putScores([
          { runId: "r", name: "passRate", value: 0.5, interval: [0.4, 0.6], n: 100 },
          { runId: "r", name: "f1", value: 0.7 },
        ]);
        await store.putScores([{ runId: "r", name: "passRate", value: 0.55, interval: [0.45, 0.65], n: 100 }]);
        expect(await store.scores("r")).toEqual([
          { runId: "r", name: "f1", value: 0.7 },
          { runId: "r", name: "passRate", value: 0.55, interval: [0.45, 0.65], n: 100 },
        ]);
      });

      withStore(
        "scores and traces of a run never created are refused, and nothing of that write is kept",
        async (store) => {
          await store.createRun(run("r"));
          await expect(
            store.putScores([
              { runId: "r", name: "a", value: 1 },
              { runId: "ghost", name: "a", value: 1 },
            ]),
          ).rejects.toThrow(/putScores\(\): no run 'ghost'; create it with createRun\(\) first/);
          expect(await store.scores("r")).toEqual([]);
          const trace = (runId: string) => ({
            runId,
            caseId: "c",
            repeat: 0,
            name: "t",
            data: new Float32Array([1]),
            shape: [1],
            axes: ["x"],
          });
          await expect(store.putTraces([trace("r"), trace("ghost")])).rejects.toThrow(/putTraces\(\): no run 'ghost'/);
          expect(await store.traces("r")).toEqual([]);
        },
      );
    });

    describe("one writer per run", () => {
      it("a second writer is refused up front, naming the holder; other runs lock side by side", async () => {
        const a = await factory.fresh();
        const b = await factory.another(a);
        try {
          expect(await b.runLockHolder("r")).toBeUndefined();
          const lock = await a.lockRun("r"); // before the run exists: a runner locks, then creates
          expect(lock.runId).toBe("r");
          expect(lock.lost.aborted).toBe(false);
          expect(await b.runLockHolder("r")).toEqual(expect.any(String));
          const refused = await b.lockRun("r").catch((e: unknown) => e);
          expect(refused).toBeInstanceOf(RunLockedError);
          expect(refused).toMatchObject({ runId: "r", holder: expect.any(String) });
          expect((refused as Error).message).toMatch(/^run 'r' already has a writer: .+\. One writer per run/);
          const other = await b.lockRun("r2");
          await a.createRun(run("r"));
          await a.appendItems("r", [item("r", 0)], marker(1, 3));
          // The other connection's writes to the locked run are refused; nothing of them is kept.
          await expect(b.appendItems("r", [item("r", 1)], marker(2, 3))).rejects.toBeInstanceOf(RunLockedError);
          await expect(b.appendEvents("r", [{ stage: "x", schema: 1, type: "x", payload: 1 }])).rejects.toThrow(
            /already has a writer/,
          );
          await expect(b.updateRun("r", { status: "failed" })).rejects.toBeInstanceOf(RunLockedError);
          await expect(b.putScores([{ runId: "r", name: "s", value: 1 }])).rejects.toBeInstanceOf(RunLockedError);
          await expect(b.deleteRun("r")).rejects.toBeInstanceOf(RunLockedError);
          expect((await b.items("r")).map((i) => i.index)).toEqual([0]);
          expect((await b.getRun("r"))!.status).toBe("running");
          expect(await b.events("r")).toEqual([]);
          // Released: the other connection takes over, and the first one is now the outsider.
          await lock.release();
          await lock.release(); // twice is harmless
          expect(await b.runLockHolder("r")).toBeUndefined();
          const taken = await b.lockRun("r");
          await b.appendItems("r", [item("r", 1)], marker(2, 3));
          await expect(a.appendItems("r", [item("r", 2)], marker(3, 3))).rejects.toBeInstanceOf(RunLockedError);
          await taken.release();
          await other.release();
          await a.appendItems("r", [item("r", 2)], marker(3, 3)); // nobody holds it: an unlocked write goes through
          expect((await a.items("r")).map((i) => i.index)).toEqual([0, 1, 2]);
        } finally {
          await a.close();
          await b.close();
        }
      });

      it("wait: true waits for the holder to let go; an aborted signal ends the wait", async () => {
        const a = await factory.fresh();
        const b = await factory.another(a);
        try {
          const first = await a.lockRun("r");
          const order: string[] = [];
          const waiting = b.lockRun("r", { wait: true }).then((lock) => {
            order.push("second got it");
            return lock;
          });
          await new Promise((resolve) => setTimeout(resolve, 300));
          order.push("first lets go");
          await first.release();
          const second = await waiting;
          expect(order).toEqual(["first lets go", "second got it"]);
          const controller = new AbortController();
          const gaveUp = a.lockRun("r", { wait: true, signal: controller.signal }).catch((e: unknown) => e);
          setTimeout(() => controller.abort(new Error("the user cancelled")), 50);
          expect(await gaveUp).toMatchObject({ message: "the user cancelled" });
          expect(await a.runLockHolder("r")).toEqual(expect.any(String));
          await second.release();
          expect(await a.runLockHolder("r")).toBeUndefined();
        } finally {
          await a.close();
          await b.close();
        }
      });

      it("closing a store lets go of its locks", async () => {
        const a = await factory.fresh();
        await a.lockRun("r");
        const again = await factory.reopen(a);
        try {
          expect(await again.runLockHolder("r")).toBeUndefined();
          await (await again.lockRun("r")).release();
        } finally {
          await again.close();
        }
      });
    });

    describe("export and import", () => {
      const fill = async (store: Store) => {
        const image = await store.putImage(PNG);
        await store.putDataset(dataset("ds", 2), [
          storedCase("ds", "c0", { input: { prompt: "look", image } }),
          storedCase("ds", "c1"),
        ]);
        await store.createRun(run("r"));
        await store.appendItems("r", [item("r", 0), item("r", 1)], marker(2, 2));
        await store.appendEvents("r", [
          { stage: "plan", schema: 1, type: "start", payload: { cases: 2 } },
          { stage: "summary", schema: 1, type: "done", payload: { passRate: 0.5 } },
        ]);
        await store.putScores([{ runId: "r", name: "passRate", value: 0.5 }]);
        await store.putTraces([
          {
            runId: "r",
            caseId: "c0",
            repeat: 0,
            name: "share",
            data: Float32Array.of(0.1, 0.2),
            shape: [2],
            axes: ["layer"],
          },
        ]);
        await store.updateRun("r", { status: "finished", finishedAt: "2026-01-01T00:10:00.000Z" });
      };

      it("a run moves to another store through one JSON file, images included", async () => {
        const a = await factory.fresh();
        const b = await factory.fresh();
        try {
          await fill(a);
          const exported = await a.exportRun("r", { images: true });
          const file: RunExport = JSON.parse(JSON.stringify(exported));
          await b.importRun(file);
          expect(await b.getRun("r")).toEqual(await a.getRun("r"));
          expect(await b.items("r")).toEqual(await a.items("r"));
          expect(await b.events("r")).toEqual(await a.events("r"));
          expect(await b.scores("r")).toEqual(await a.scores("r"));
          expect(await b.traces("r")).toEqual(await a.traces("r"));
          expect(await b.progress("r")).toEqual(await a.progress("r"));
          expect(await b.cases("ds")).toEqual(await a.cases("ds"));
          expect(await b.getImage(PNG_KEY)).toEqual(await a.getImage(PNG_KEY));
          await expect(b.importRun(file)).rejects.toThrow(/already exists/);
          const withoutImages = await a.exportRun("r");
          expect(withoutImages.images).toBeUndefined();
          expect((await a.exportRun("r", { dataset: false })).cases).toBeUndefined();
          await expect(a.exportRun("nope")).rejects.toThrow(/no run 'nope'/);
        } finally {
          await a.close();
          await b.close();
        }
      });

      withStore("a run exported by the Node file store (fixture) imports and resumes here", async (store) => {
        await store.importRun(nodeExport as unknown as RunExport);
        expect(await store.getRun("node-run")).toMatchObject({ dataset: "pope-mini", config: { repeats: 2 } });
        expect((await store.items("node-run")).map((i) => [i.index, i.caseId])).toEqual([
          [0, "c0"],
          [1, "c1"],
        ]);
        const [trace] = await store.traces("node-run");
        expect(trace!.data).toEqual(Float32Array.of(0.5, 0.25, -1, 3.5));
        expect((await store.cases("pope-mini"))[0]!.input.image).toBe(PNG_KEY);
        expect(await store.getImage(PNG_KEY)).toMatchObject({ bytes: PNG, type: "image/png" });
        expect((await store.events("node-run"))[0]).toMatchObject({ seq: 0, type: "start" });
        // The imported progress says 2 of 4: the run continues here where it stopped there.
        expect((await resumePoint(store, "node-run", 4)).next).toBe(2);
        await store.appendItems("node-run", [item("node-run", 2, { caseId: "c0", repeat: 1 })], marker(3, 4));
        expect(await store.progress("node-run")).toMatchObject({ done: 3, total: 4 });
      });

      withStore("a foreign or tampered file is refused before anything is written", async (store) => {
        await expect(store.importRun({ format: "other" } as unknown as RunExport)).rejects.toThrow(
          /not an EvalRx run export/,
        );
        const bad = {
          format: "evalrx-run",
          version: 1,
          exportedAt: "2026-01-01T00:00:00.000Z",
          run: run("x"),
          items: [item("y", 0)],
          events: [],
          scores: [],
          traces: [],
        } as RunExport;
        await expect(store.importRun(bad)).rejects.toThrow(/another run/);
        expect(await store.getRun("x")).toBeUndefined();
      });
    });

    it("what was written is there after the store is closed and reopened", async () => {
      const store = await factory.fresh();
      await store.putDataset(dataset("ds", 1), [storedCase("ds", "a")]);
      await store.putImage(PNG);
      await store.createRun(run("r"));
      await store.appendItems("r", [item("r", 0)], marker(1, 3));
      await store.appendEvents("r", [{ stage: "plan", schema: 1, type: "start", payload: null }]);
      const again = await factory.reopen(store);
      try {
        expect((await again.cases("ds")).map((c) => c.id)).toEqual(["a"]);
        expect(await again.hasImage(PNG_KEY)).toBe(true);
        expect((await again.items("r")).map((i) => i.index)).toEqual([0]);
        expect(await again.progress("r")).toMatchObject({ done: 1, total: 3 });
        // Sequence numbers and duplicate checks continue where the closed store left off.
        expect((await again.appendEvents("r", [{ stage: "x", schema: 1, type: "x", payload: 1 }]))[0]!.seq).toBe(1);
        await expect(again.appendItems("r", [item("r", 0)], marker(1, 3))).rejects.toThrow(/already stored/);
        expect(await again.addCases("ds", [storedCase("ds", "a"), storedCase("ds", "b")])).toBe(1);
        const usage = await again.usage();
        expect(typeof usage.persisted).toBe("boolean");
      } finally {
        await again.close();
      }
    });
  });
}
