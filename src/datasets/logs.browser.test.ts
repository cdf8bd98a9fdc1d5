import { expect, it } from "vitest";
import { POPE_CASES } from "./fixtures/logs-expected.ts";
import { importDataset, importStream } from "./import.ts";
import { ingest, type CaseRow, type DatasetInfo, type DatasetSink } from "./ingest.ts";
import popeUrl from "./fixtures/logs/pope.eval?url";
import popeZstdUrl from "./fixtures/logs/pope-zstd.eval?url";
import nanUrl from "./fixtures/logs/inspect-nan.json?url";
import truthfulUrl from "./fixtures/logs/samples_truthfulqa_gen_2026-06-01T10-00-00.123456.jsonl?url";
import arcUrl from "./fixtures/logs/samples_arc_easy_2024-05-29T10-00-00.123456.json?url";
import resultsUrl from "./fixtures/logs/results_2026-06-01T10-00-00.123456.json?url";

/** A file as the page gets it from a drop or a picker. */
async function dropped(url: string, name: string): Promise<File> {
  return new File([await (await fetch(url)).arrayBuffer()], name);
}

/** The parts of the page's store that `ingest` writes, in memory. */
function memorySink(): DatasetSink & { rows: CaseRow[]; images: number } {
  const datasets = new Map<string, DatasetInfo>();
  const sink = {
    rows: [] as CaseRow[],
    images: 0,
    async getDataset(id: string) {
      return datasets.get(id);
    },
    async putDataset(dataset: DatasetInfo) {
      datasets.set(dataset.id, dataset);
    },
    async addCases(_id: string, cases: readonly CaseRow[]) {
      sink.rows.push(...cases);
      return cases.length;
    },
    async cases() {
      return sink.rows;
    },
    async putImage() {
      sink.images++;
      return "sha256:x";
    },
  };
  return sink;
}

it("an Inspect .eval archive (deflate and zstd) dropped into the page reads from File.stream(), found by its bytes", async () => {
  const deflate = await dropped(popeUrl, "pope.eval");
  const zstd = await dropped(popeZstdUrl, "renamed.bin");
  const a = await importDataset(deflate.stream(), { name: deflate.name });
  const b = await importDataset(zstd.stream(), { name: zstd.name });
  expect(a.format).toBe("inspect");
  expect(b).toEqual(a);
  expect(a.cases.map((c) => [c.id, c.label, c.cluster])).toEqual(POPE_CASES);
  expect(a.cases[0]!.input.image).toMatch(/^data:image\/png;base64,/);
  expect(a.cases[2]!.meta["metadata.entropy"]).toBeNaN();
  expect(a.label?.column).toBe("score.match");
  expect(a.warnings.map((w) => w.code)).toEqual(["superseded"]);
});

it("ingest over File.stream() stores the archive's samples and says the label and the warnings", async () => {
  const file = await dropped(popeZstdUrl, "pope-zstd.eval");
  const sink = memorySink();
  const result = await ingest(sink, file.stream(), {
    datasetId: "pope",
    name: file.name,
    readImage: async () => undefined,
  });
  expect(result.format).toBe("inspect");
  expect(result.added).toBe(8);
  expect(result.problems).toEqual([]);
  expect(result.label?.derived).toEqual(["score.match", "answer.match", "explanation.match"]);
  expect(result.warnings.map((w) => w.code)).toEqual(["superseded"]);
  // The attachment's data URI is an image in the store, once.
  expect(sink.images).toBe(1);
  expect(new Set(sink.rows.map((r) => r.input.image))).toEqual(
    new Set([undefined, "sha256:c414cd0e204de974f73753c7e28d7638e7b3691bb8b1a2bab6b25bb7fed7ce77"]),
  );
});

it("NaN and Infinity in a .json log, lm-eval samples in both layouts, and an aggregate file refused, as in Node", async () => {
  const nan = await importDataset((await dropped(nanUrl, "log.json")).stream(), { name: "log.json" });
  expect(nan.cases.map((c) => c.meta["metadata.entropy"])).toEqual([NaN, Infinity, 0.3]);
  expect(nan.warnings.map((w) => w.code)).toEqual(["no-image"]);
  const truthful = await dropped(truthfulUrl, "samples_truthfulqa_gen.jsonl");
  const batches = [];
  for await (const batch of importStream(truthful.stream(), { name: truthful.name })) batches.push(batch);
  expect(batches.flatMap((b) => b.cases)).toHaveLength(24);
  expect(batches.find((b) => b.label)?.label?.column).toBe("bleu_acc");
  const arc = await importDataset((await dropped(arcUrl, "samples_arc.json")).stream(), { name: "samples_arc.json" });
  expect([arc.format, arc.cases.length, arc.label?.column]).toEqual(["lm-eval", 4, "acc"]);
  const results = await dropped(resultsUrl, "results_2026-06-01T10-00-00.123456.json");
  await expect(importDataset(results.stream(), { name: results.name })).rejects.toThrow(
    /results file: aggregate scores .* samples_truthfulqa_gen_2026-06-01T10-00-00\.123456\.jsonl/,
  );
});
