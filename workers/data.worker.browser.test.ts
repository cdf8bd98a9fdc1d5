import { proxy, wrap } from "comlink";
import { afterAll, expect, it } from "vitest";
import { caseHash, datasetVersion, importDataset } from "../src/datasets/index.ts";
import { droppedImages } from "../src/datasets/dropped.browser.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import datasetUrl from "../src/datasets/fixtures/dataset.jsonl?url";
import redUrl from "../src/datasets/fixtures/images/red.png?url";
import truncatedUrl from "../src/datasets/fixtures/images/truncated.png?url";
import notImageUrl from "../src/datasets/fixtures/images/not-an-image.png?url";
import type { DataWorkerApi } from "./data.worker.ts";
import type { DroppedInput, ReadProgress } from "./data-import.ts";

const worker = new Worker(new URL("./data.worker.ts", import.meta.url), { type: "module" });
const data = wrap<DataWorkerApi>(worker);
const db = `evalrx-data-worker-${Date.now()}`;
afterAll(async () => {
  worker.terminate();
  await IdbStore.destroy(db);
});

const bytes = async (url: string) => new Uint8Array(await (await fetch(url)).arrayBuffer());

/** The fixture dataset dropped as a folder: `set/dataset.jsonl` with `set/images/*.png`. */
async function droppedFolder(): Promise<DroppedInput[]> {
  const file = (b: Uint8Array, name: string) => new File([b as BlobPart], name);
  return [
    { file: file(await bytes(redUrl), "red.png"), path: "set/images/red.png" },
    { file: file(await bytes(datasetUrl), "dataset.jsonl"), path: "set/dataset.jsonl" },
    { file: file(await bytes(truncatedUrl), "truncated.png"), path: "set/images/truncated.png" },
    { file: file(await bytes(notImageUrl), "not-an-image.png"), path: "set/images/not-an-image.png" },
  ];
}

let job = 0;

it("checks a dropped folder off the main thread: the CLI's problems, line by line, and nothing stored", async () => {
  const files = await droppedFolder();
  const report = await data.check({ files, dataset: 1 }, ++job);
  // The same reading `evalrx data check` does, here on the main thread with the same images.
  const dataset = files[1]!.file;
  const reference = await importDataset(dataset.stream(), {
    name: "dataset.jsonl",
    images: droppedImages(
      files.map((f) => f.file),
      dataset,
    ),
  });
  expect(report.format).toBe("jsonl");
  expect(report.problems).toEqual(reference.problems);
  expect(report.valid).toBe(reference.cases.length);
  expect(report.rows).toBe(reference.cases.length + reference.problems.length);
  expect(report.problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7, 9, 10, 11, 12, 16]);
  expect(report.problems[0]!.reason).toMatch(/^not JSON/);
  expect(report.imagesBeside).toBe(3);
  expect(report.preview[0]).toMatchObject({ id: "q1", prompt: "Is there a dog?", split: "random" });
  expect(report.facets.withImage).toBe(2);
  const store = await IdbStore.open(db);
  expect(await store.getDataset("set")).toBeUndefined();
  await store.close();
});

it("finds a dropped folder's images by their paths, not only by name", async () => {
  const file = (b: Uint8Array | string, name: string) => new File([b as BlobPart], name);
  const files: DroppedInput[] = [
    { file: file('{"id":"a","input":{"prompt":"?","image":"b/red.png"}}\n', "d.jsonl"), path: "set/d.jsonl" },
    { file: file(await bytes(redUrl), "red.png"), path: "set/a/red.png" },
    { file: file("not an image", "red.png"), path: "set/b/red.png" },
  ];
  const report = await data.check({ files, dataset: 0 }, ++job);
  expect(report.problems.map((p) => p.reason)).toEqual([
    "image 'b/red.png' is not decodable: not an image this tool can decode (expected PNG, JPEG, GIF, WebP or BMP)",
  ]);
});

it("imports the valid rows with their images, never replaces a dataset, and adds only new ids", async () => {
  const files = await droppedFolder();
  const progress: number[] = [];
  const report = await data.importFiles(
    { files, dataset: 1, db, datasetId: "set", mode: "new" },
    ++job,
    proxy((p: ReadProgress) => void progress.push(p.rows)),
  );
  expect(report).toMatchObject({ datasetId: "set", added: 5, skipped: 0, problems: 10, rows: 15, caseCount: 5 });
  const store = await IdbStore.open(db);
  const cases = await store.cases("set");
  // The rows `data check` calls valid (the folder's images resolved by their paths), and only those.
  const reference = await importDataset(files[1]!.file.stream(), {
    name: "dataset.jsonl",
    images: droppedImages(
      files.map((f) => f.file),
      files[1]!.file,
    ),
  });
  expect(cases.map((c) => c.id).sort()).toEqual(reference.cases.map((c) => c.id).sort());
  expect(cases.map((c) => c.id)).toContain("q1");
  expect(report.version).toBe(datasetVersion(cases));
  // Each case keeps its caseHash, the library's own.
  expect(cases.map((c) => c.hash)).toEqual(cases.map((c) => caseHash(c)));
  const image = cases.find((c) => c.id === "q1")!.input.image!;
  expect(image).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect((await store.getImage(image))?.bytes).toEqual(await bytes(redUrl));
  expect((await store.getDataset("set"))?.source).toBe("set/dataset.jsonl");

  await expect(data.importFiles({ files, dataset: 1, db, datasetId: "set", mode: "new" }, ++job)).rejects.toThrow(
    "a dataset named 'set' exists already (5 cases); choose another name, or add the new cases to it",
  );
  const more = new File(['{"id":"q1","input":"changed"}\n{"id":"new-1","input":"fresh"}\n'], "more.jsonl");
  const added = await data.importFiles(
    { files: [{ file: more, path: "more.jsonl" }], dataset: 0, db, datasetId: "set", mode: "add" },
    ++job,
  );
  expect(added).toMatchObject({ added: 1, skipped: 1, caseCount: 6 });
  expect((await store.getCase("set", "q1"))?.input.prompt).toBe("Is there a dog?");
  await store.close();
});

it("a cancelled import of a new dataset keeps nothing", async () => {
  const lines = Array.from({ length: 40_000 }, (_, i) => `{"id":"c${i}","input":"question ${i} ${"x".repeat(200)}"}\n`);
  const file = new File(lines, "big.jsonl");
  const id = ++job;
  const seen: number[] = [];
  const report = await data.importFiles(
    { files: [{ file, path: "big.jsonl" }], dataset: 0, db, datasetId: "big", mode: "new" },
    id,
    proxy((p: ReadProgress) => {
      seen.push(p.rows);
      if (seen.length === 1) void data.cancel(id);
    }),
  );
  // It stopped part-way (not at the end), and what it had written is gone.
  expect(seen.at(-1)).toBeLessThan(40_000);
  expect(report.cancelled).toMatch(/^Cancelled before the end: nothing was kept/);
  const store = await IdbStore.open(db);
  expect(await store.getDataset("big")).toBeUndefined();
  expect(await store.casePage("big", 0)).toBeUndefined();
  await store.close();
});

it("a cancel that arrives before its import starts stops it there", async () => {
  const file = new File(['{"id":"a","input":"x"}\n'], "early.jsonl");
  const id = ++job;
  await data.cancel(id);
  const report = await data.importFiles(
    { files: [{ file, path: "early.jsonl" }], dataset: 0, db, datasetId: "early", mode: "new" },
    id,
  );
  expect(report.cancelled).toMatch(/nothing was kept/);
  const store = await IdbStore.open(db);
  expect(await store.getDataset("early")).toBeUndefined();
  await store.close();
});

it("a table's columns and detected mapping are reported, and a mapping naming a missing column says so", async () => {
  const csv = new File(["question,answer,ok,grade\nWhat is 2+2?,4,yes,0.5\nCapital of France?,Paris,no,1\n"], "qa.csv");
  const files = [{ file: csv, path: "qa.csv" }];
  const report = await data.check({ files, dataset: 0 }, ++job);
  expect(report).toMatchObject({
    format: "csv",
    valid: 2,
    columns: ["question", "answer", "ok", "grade"],
    mapping: { input: "question", expected: "answer" },
  });
  const relabelled = await data.check({ files, dataset: 0, mapping: { label: "ok" } }, ++job);
  expect(relabelled.mapping).toMatchObject({ label: "ok" });
  expect(relabelled.facets.labels).toEqual({ pass: 1, fail: 1, none: 0 });
  // JSONL whose fields are named otherwise is mapped the same way.
  const jsonl = new File(
    ['{"question":"2+2?","answer":"4","correct":true}\n{"question":"3+3?","answer":"6","correct":false}\n'],
    "qa.jsonl",
  );
  const lines = await data.check({ files: [{ file: jsonl, path: "qa.jsonl" }], dataset: 0 }, ++job);
  expect(lines).toMatchObject({
    format: "jsonl",
    valid: 2,
    columns: ["question", "answer", "correct"],
    mapping: { input: "question", expected: "answer", label: "correct" },
    facets: { labels: { pass: 1, fail: 1, none: 0 } },
  });
  const inDatasetFormat = await data.check(
    { files: [{ file: new File(['{"input":"hi"}\n'], "a.jsonl"), path: "a.jsonl" }], dataset: 0 },
    ++job,
  );
  expect(inDatasetFormat.columns).toBeUndefined();
  const wrong = await data.check({ files, dataset: 0, mapping: { label: "verdict" } }, ++job);
  expect(wrong.mappingError).toBe(
    "column mapping: label column 'verdict' is not in the file; columns are ['question', 'answer', 'ok', 'grade']",
  );
});

it("a dataset view reads pages lazily, filters in the worker, and previews selections with the CLI's functions", async () => {
  const store = await IdbStore.open(db);
  const many = Array.from({ length: 2500 }, (_, i) => ({
    id: `v${String(i).padStart(4, "0")}`,
    datasetId: "view",
    hash: "000000000000",
    input: { prompt: `q${i}` },
    tags: i % 2 ? ["odd"] : [],
    split: ["a", "b", "c"][i % 3]!,
    cluster: `k${Math.floor(i / 5)}`,
    status: "active" as const,
    meta: { n: i },
    ...(i % 4 === 0 && { label: false }),
  }));
  const now = new Date().toISOString();
  await store.putDataset(
    { id: "view", name: "view", version: "x", caseCount: many.length, createdAt: now, updatedAt: now },
    many,
  );
  await store.close();
  const loads: number[] = [];
  const opened = await data.openView(
    db,
    "view",
    proxy((n: number) => void loads.push(n)),
  );
  expect(opened).toMatchObject({ record: { caseCount: 2500 }, loaded: 1000, generation: 0 });
  // The first rows come with the view (no second round trip before the table shows them).
  expect(opened.rows.map((r) => r.id).slice(0, 2)).toEqual(["v0000", "v0001"]);
  expect(opened.rows).toHaveLength(100);
  expect((await data.rows(opened.viewId, 0, 2400, 2401))!.map((r) => r.id)).toEqual(["v2400"]);
  const all = await data.query(opened.viewId, {});
  expect(all).toEqual({ generation: 1, count: 2500, total: 2500 });
  expect((await data.rows(opened.viewId, 1, 2400, 2403))!.map((r) => r.id)).toEqual(["v2400", "v2401", "v2402"]);
  const filtered = await data.query(opened.viewId, { splits: ["a"], expression: '"odd" in tags and meta.n < 100' });
  expect(filtered).toEqual({ generation: 2, count: 17, total: 2500 });
  expect(await data.rows(opened.viewId, 1, 0, 3)).toBeUndefined();
  expect((await data.rows(opened.viewId, 2, 0, 3))!.map((r) => r.id)).toEqual(["v0003", "v0009", "v0015"]);
  expect(await data.query(opened.viewId, { expression: "split = 1" })).toEqual({
    generation: 3,
    error: "at column 7: '=' is not an operator; use == to compare",
    position: 6,
  });
  expect((await data.caseAt(opened.viewId, 7))?.meta).toEqual({ n: 7 });
  const f = await data.facets(opened.viewId);
  expect(f.labels).toEqual({ pass: 0, fail: 625, none: 1875 });
  expect(f.splits).toEqual([
    ["a", 834],
    ["b", 833],
    ["c", 833],
  ]);
  const p = await data.preview(opened.viewId, { split: "a", sample: 100 }, { fraction: 0.4, by: "cluster", seed: 1 });
  expect(p.selected).toBe(100);
  expect(p.explore + p.sealed).toBe(100);
  expect(loads.at(-1)).toBe(2500);
  await data.closeView(opened.viewId);
  await expect(data.rows(opened.viewId, 1, 0, 1)).rejects.toThrow(`dataset view ${opened.viewId} is closed`);
});

it("an import cut off mid-way (its worker closed, as a closed tab would) and run again ends whole: no case lost, none twice", async () => {
  const rows = 60_000;
  const lines = Array.from(
    { length: rows },
    (_, i) => `{"id":"r${i}","input":"question ${i} ${"y".repeat(100)}","tags":["t${i % 7}"]}\n`,
  );
  const file = new File(lines, "resume.jsonl");
  const files = [{ file, path: "resume.jsonl" }];
  const store = await IdbStore.open(db);
  // A second data worker, closed as soon as its first batch of cases is in IndexedDB.
  const doomed = new Worker(new URL("./data.worker.ts", import.meta.url), { type: "module" });
  const cutOff = new Promise<void>((resolve) => {
    let watching = false;
    void wrap<DataWorkerApi>(doomed)
      .importFiles(
        { ...{ files, dataset: 0 }, db, datasetId: "resume", mode: "new" },
        1,
        proxy(() => {
          if (watching) return;
          watching = true;
          void (async () => {
            while (!(await store.casePage("resume", 0))) await new Promise((r) => setTimeout(r, 1));
            doomed.terminate();
            resolve();
          })();
        }),
      )
      .catch(() => undefined);
  });
  await cutOff;
  // The first rows of the file are stored (whole batches: no gap, no half-written case), and no dataset
  // record says the dataset is whole.
  expect(await store.getDataset("resume")).toBeUndefined();
  const stored = new Set((await store.cases("resume")).map((c) => c.id));
  const partial = stored.size;
  expect(partial).toBeGreaterThan(0);
  expect(partial).toBeLessThan(rows);
  for (let i = 0; i < partial; i++) if (!stored.has(`r${i}`)) expect.fail(`r${i} is missing from the first ${partial}`);

  const report = await data.importFiles({ files, dataset: 0, db, datasetId: "resume", mode: "new" }, ++job);
  expect(report).toMatchObject({ caseCount: rows, added: rows - partial, skipped: partial, problems: 0, rows });
  const cases = await store.cases("resume");
  expect(cases).toHaveLength(rows);
  expect(new Set(cases.map((c) => c.id)).size).toBe(rows);
  const reference = await importDataset(file.stream(), { name: "resume.jsonl" });
  expect(report.version).toBe(datasetVersion(reference.cases));
  expect(datasetVersion(cases)).toBe(report.version);
  expect((await store.getDataset("resume"))?.caseCount).toBe(rows);
  await store.close();
});
