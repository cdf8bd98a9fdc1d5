import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { POPE_CASES } from "./fixtures/logs-expected.ts";
import { cut } from "./fixtures/cut.ts";
import { writeZip, type FixtureEntry } from "./fixtures/zip-writer.ts";
import { detectFormat, importDataset, importStream, UnreadableFileError } from "./import.ts";
import type { ImportOptions, ImportResult } from "./types.ts";
import { zipEntries } from "./zip.ts";

// The fixtures are written by fixtures/make-logs.mts to each tool's documented format.
const log = (name: string) => new Uint8Array(readFileSync(new URL(`./fixtures/logs/${name}`, import.meta.url)));
const image = (name: string) => new Uint8Array(readFileSync(new URL(`./fixtures/images/${name}`, import.meta.url)));
const RED = "sha256:c414cd0e204de974f73753c7e28d7638e7b3691bb8b1a2bab6b25bb7fed7ce77";
const images = {
  async read(ref: string) {
    return ref === "images/red.png" ? image("red.png") : undefined;
  },
};
const read = (name: string, options: ImportOptions = {}) => importDataset(log(name), { name, ...options });
const codes = (r: ImportResult) => r.warnings.map((w) => w.code);

describe("Inspect .eval archives", () => {
  it("reads every sample and epoch, resolves attachments, keeps NaN and -Infinity, and clusters epochs of a sample", async () => {
    const stored: string[] = [];
    const r = await read("pope.eval", { images: { ...images, put: async (hash) => void stored.push(hash) } });
    expect(r.format).toBe("inspect");
    expect(r.problems).toEqual([]);
    expect(r.cases.map((c) => [c.id, c.label, c.cluster])).toEqual(POPE_CASES);
    // The image was an attachment (a data URI in the sample's attachments): resolved, stored once by content hash.
    expect(r.cases[0]!.input).toEqual({ prompt: "Is there a dog in the image?", image: RED });
    expect(stored).toEqual([RED]);
    expect(r.cases[3]!.input).toEqual({ prompt: "Is there a tree in the image?" });
    // A long output text moved to the attachments is read back; pydantic's NaN and -Infinity are numbers.
    expect(r.cases[0]!.meta.output).toMatch(/^Yes\. I looked at the whole picture/);
    expect(r.cases[2]!.meta["metadata.entropy"]).toBeNaN();
    expect(r.cases[3]!.meta["metadata.entropy"]).toBe(-Infinity);
    expect(r.cases[0]!.meta).toMatchObject({
      "score.match": 1,
      "answer.match": "Yes",
      "metadata.category": "adversarial",
    });
    // Sample 2 of epoch 1 was retried: its second record (scored, no error) is the one read.
    expect(r.cases[1]!.meta.error).toBeUndefined();
    expect(r.warnings).toEqual([expect.objectContaining({ code: "superseded", count: 1 })]);
    expect(r.label).toEqual({
      column: "score.match",
      reason: "the first scorer whose every value is a verdict",
      derived: ["score.match", "answer.match", "explanation.match"],
      choices: [],
    });
  });

  it("skipImages: no case keeps an image, and none is counted as missing", async () => {
    for (const name of ["pope.eval", "cancelled.eval", "inspect-nan.json"]) {
      const r = await read(name, { skipImages: true, images });
      expect(r.cases.every((c) => c.input.image === undefined)).toBe(true);
      expect(codes(r)).not.toContain("no-image");
    }
  });

  it("zstd entries (multi-frame too) and zip64 local headers read the same as deflate", async () => {
    expect(await read("pope-zstd.eval", { images })).toEqual(await read("pope.eval", { images }));
  });

  it("gives the same result however the archive stream is cut", async () => {
    const bytes = log("pope-zstd.eval");
    const whole = await read("pope-zstd.eval");
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (points) => {
        expect(await importDataset(cut(bytes, points), { name: "pope-zstd.eval" })).toEqual(whole);
      }),
      { numRuns: 25 },
    );
  });

  it("is recognised by its bytes whatever the file is called, and --format inspect reads it too", async () => {
    expect(detectFormat("log.bin", log("pope.eval"))).toBe("inspect");
    expect((await importDataset(log("pope.eval"), { name: "x.json" })).cases).toHaveLength(8);
    expect((await importDataset(log("pope.eval"), { format: "inspect" })).cases).toHaveLength(8);
  });

  it("a cancelled run written without images: counts, the errored sample, placeholders kept as no image", async () => {
    const r = await read("cancelled.eval", { images });
    expect(r.problems).toEqual([]);
    expect(r.cases.map((c) => [c.id, c.label, c.input.image])).toEqual([
      ["q1", true, undefined],
      ["q2", false, undefined],
      ["q3", undefined, undefined],
    ]);
    expect(r.cases[2]!.meta.error).toBe("TimeoutError: generate() took longer than 60 s");
    expect(codes(r)).toEqual(["run-cancelled", "sample-errors", "unlabelled", "no-image"]);
    expect(r.warnings[0]!.message).toBe("the run was cancelled: 3 of 10 samples completed");
    expect(r.warnings[3]).toMatchObject({
      count: 3,
      message: expect.stringMatching(/^3 case\(s\) kept with no image/),
    });
  });

  it("a run still going (no header, no sample files) is read from its journal's summaries", async () => {
    const r = await read("running.eval");
    expect(r.cases.map((c) => [c.id, c.label])).toEqual([
      ["q1", true],
      ["q2", false],
    ]);
    expect(codes(r)).toEqual(["run-unfinished", "summaries-only", "no-image"]);
  });

  it("streams: the first samples come out before the archive has been read to its end", async () => {
    const entries: FixtureEntry[] = [
      { name: "_journal/start.json", data: JSON.stringify({ version: 2, eval: {}, plan: {} }) },
    ];
    for (let i = 0; i < 300; i++)
      entries.push({
        name: `samples/${i}_epoch_1.json`,
        data: JSON.stringify({
          id: i,
          epoch: 1,
          input: `q${i}`,
          target: "a",
          scores: { s: { value: i % 3 ? "C" : "I" } },
          events: [{ pad: "x".repeat(2000) }],
        }),
      });
    const bytes = writeZip(entries);
    let pulled = 0;
    async function* counted() {
      for (let at = 0; at < bytes.length; at += 4096) {
        pulled++;
        yield bytes.slice(at, at + 4096);
      }
    }
    const total = Math.ceil(bytes.length / 4096);
    let firstAt = -1;
    let seen = 0;
    for await (const entry of zipEntries(counted(), { wanted: (n) => n.startsWith("samples/") })) {
      if (firstAt < 0) firstAt = pulled;
      seen += entry.bytes ? 1 : 0;
    }
    expect(seen).toBe(300);
    expect(firstAt).toBeLessThan(total / 10);
    const r = await importDataset(counted(), { name: "big.eval" });
    expect(r.cases).toHaveLength(300);
    expect(r.cases.filter((c) => c.label === false)).toHaveLength(100);
  });

  it("a corrupt, non-JSON, oddly compressed or cut-short sample is a problem naming its entry; the others are kept", async () => {
    const sample = (id: number) =>
      JSON.stringify({ id, epoch: 1, input: `q${id}`, target: "a", scores: { s: { value: "C" } } });
    const good = writeZip([
      { name: "header.json", data: JSON.stringify({ version: 2, status: "success", eval: {} }) },
      { name: "samples/1_epoch_1.json", data: sample(1) },
      { name: "samples/2_epoch_1.json", data: sample(2), compressed: Uint8Array.of(0xff, 0xff, 0xff, 0xff) },
      { name: "samples/3_epoch_1.json", data: "{not json" },
      { name: "samples/4_epoch_1.json", data: sample(4), method: 0, descriptor: true },
      { name: "samples/5_epoch_1.json", data: sample(5), method: 93, compressed: Uint8Array.of(1, 2, 3, 4, 5, 6) },
      { name: "samples/6_epoch_1.json", data: sample(6) },
    ]);
    const r = await importDataset(good, { name: "hurt.eval" });
    expect(r.cases.map((c) => c.id)).toEqual(["1", "4", "6"]);
    expect(r.problems.map((p) => [p.line, p.reason.split(" (")[0]])).toEqual([
      [2, "samples/2_epoch_1.json could not be decompressed"],
      [3, "samples/3_epoch_1.json is not JSON"],
      [5, "samples/5_epoch_1.json could not be decompressed"],
    ]);
    // Cut inside sample 6's data: the samples before it are kept and the cut one is named.
    const name6 = new TextEncoder().encode("samples/6_epoch_1.json");
    const at = good.findIndex((_, i) => name6.every((b, k) => good[i + k] === b));
    const cutShort = await importDataset(good.subarray(0, at + name6.length + 10), { name: "cut.eval" });
    expect(cutShort.cases.map((c) => c.id)).toEqual(["1", "4"]);
    expect(cutShort.problems.at(-1)!.reason).toBe(
      "samples/6_epoch_1.json is cut short: the archive ends inside it (a truncated file)",
    );
  });

  it("a zip that is not an Inspect log cannot be read, and says what it holds", async () => {
    const zip = writeZip([{ name: "report.txt", data: "hello" }]);
    await expect(importDataset(zip, { name: "x.zip" })).rejects.toThrow(
      /a zip archive that is not an Inspect AI .eval log: it has no header.json or _journal\/start.json \(entries: report.txt\)/,
    );
  });
});

describe("Inspect .json logs", () => {
  it("reads NaN and Infinity as pydantic writes them; placeholders and missing images make cases with no image", async () => {
    const r = await read("inspect-nan.json", { images });
    expect(r.format).toBe("inspect");
    expect(r.problems).toEqual([]);
    expect(r.cases.map((c) => [c.id, c.label, c.input.image])).toEqual([
      ["1", true, undefined],
      ["2", false, undefined],
      ["3", true, RED],
    ]);
    expect(r.cases.map((c) => c.meta["metadata.entropy"])).toEqual([NaN, Infinity, 0.3]);
    expect(r.cases.map((c) => c.meta["score.calibration"])).toEqual([NaN, Infinity, 0.5]);
    expect(r.warnings).toEqual([
      expect.objectContaining({
        code: "no-image",
        count: 2,
        message: expect.stringMatching(
          /1 had a placeholder .*; 1 named an image that could not be used \(first: image not found/,
        ),
      }),
    ]);
  });

  it("a log with no samples says so, with what its header claims", async () => {
    const r = await read("header-only.json");
    expect(r.cases).toEqual([]);
    expect(r.warnings).toEqual([
      expect.objectContaining({
        code: "no-samples",
        message: expect.stringMatching(/holds no samples although its header says 3 completed/),
      }),
    ]);
  });

  it("--cluster names a metadata column; one that is not there is refused with the columns", async () => {
    const r = await read("pope.eval", { mapping: { cluster: "metadata.category" } });
    expect(r.cases.map((c) => c.cluster)).toEqual([
      "adversarial",
      "popular",
      "random",
      "popular",
      "adversarial",
      "popular",
      "random",
      "popular",
    ]);
    await expect(read("pope.eval", { mapping: { cluster: "image" } })).rejects.toThrow(
      /cluster column 'image' is not a column of this Inspect AI log; its columns are \['epoch', 'score.match'/,
    );
  });

  it("--label takes a scorer by name, and refuses one that is not there with the choices", async () => {
    const r = await read("inspect-nan.json", { mapping: { label: "match" } });
    expect(r.label).toMatchObject({ column: "score.match", reason: "named with --label" });
    await expect(read("inspect-nan.json", { mapping: { label: "accuracy" } })).rejects.toThrow(
      /label column 'accuracy' is not a column of this Inspect AI log; verdict scorers are \['score.match'\], and its columns are \[/,
    );
    await expect(read("inspect-nan.json", { mapping: { label: "metadata.entropy" } })).rejects.toThrow(
      /label column 'metadata.entropy' holds no pass\/fail verdict \(values like NaN, Infinity, 0.3\)/,
    );
  });
});

describe("lm-evaluation-harness", () => {
  const truthful = "samples_truthfulqa_gen_2026-06-01T10-00-00.123456.jsonl";

  it("one binary metric labels the whole file; a 0-100 score of exactly 0 never does; NaN rows are kept", async () => {
    const r = await read(truthful);
    expect(r.format).toBe("lm-eval");
    expect(r.cases).toHaveLength(24);
    expect(r.problems).toEqual([]);
    expect(r.label).toEqual({
      column: "bleu_acc",
      reason: "the first metric whose every value is a verdict",
      derived: ["bleu_acc", "bleu_max", "bleu_diff", "rouge1_max", "rouge1_acc", "rouge1_diff"],
      choices: ["rouge1_acc"],
    });
    expect(r.cases.map((c) => c.label)).toEqual(r.cases.map((c) => c.meta.bleu_acc === 1));
    expect(r.cases[5]!.meta.bleu_max).toBe(0);
    expect(r.cases[5]!.label).toBe(true);
    expect(r.cases[1]!.meta.bleu_diff).toBeNaN();
    expect(r.cases[2]!.meta.rouge1_diff).toBe(-Infinity);
  });

  it("--label picks another metric; one with no verdict at all, or not in the file, is refused with the choices", async () => {
    const rouge = await read(truthful, { mapping: { label: "rouge1_acc" } });
    expect(rouge.cases.map((c) => c.label)).toEqual(rouge.cases.map((c) => c.meta.rouge1_acc === 1));
    expect(rouge.label?.column).toBe("rouge1_acc");
    // bleu_max is 0 in two rows only: honoured where it is a verdict, every other row said to have none.
    const max = await read(truthful, { mapping: { label: "bleu_max" } });
    expect(max.cases.filter((c) => c.label !== undefined).map((c) => c.id)).toEqual(["5", "11"]);
    expect(max.warnings.map((w) => [w.code, w.count])).toEqual([
      ["unlabelled", 22],
      ["one-class", 2],
    ]);
    await expect(read(truthful, { mapping: { label: "rouge1_diff" } })).rejects.toThrow(/holds no pass\/fail verdict/);
    await expect(read(truthful, { mapping: { label: "acc" } })).rejects.toThrow(
      /label column 'acc' is not a column of this lm-eval samples file; verdict metrics are \['bleu_acc', 'rouge1_acc'\]/,
    );
  });

  it("the first tracker's layout (one JSON list) with two filters: ids carry the filter, a doc's rows share a cluster", async () => {
    const name = "samples_gsm8k_2024-05-20T10-00-00.123456.json";
    expect(detectFormat(name, log(name))).toBe("json");
    const r = await read(name);
    expect(r.format).toBe("lm-eval");
    expect(r.problems).toEqual([]);
    expect(r.cases.map((c) => c.id).slice(0, 4)).toEqual([
      "0/strict-match",
      "0/flexible-extract",
      "1/strict-match",
      "1/flexible-extract",
    ]);
    expect(new Set(r.cases.map((c) => c.cluster))).toEqual(new Set(["doc:0", "doc:1", "doc:2", "doc:3", "doc:4"]));
    expect(r.cases.map((c) => c.label)).toEqual([true, true, false, true, true, true, false, false, true, true]);
    expect(r.cases[0]!.input.prompt).toMatch(/^Question: Tom has 2 apples/);
  });

  it("samples written as one JSON list into a .jsonl file (before 2024) are found by their content", async () => {
    const list = log("samples_gsm8k_2024-05-20T10-00-00.123456.json");
    const r = await importDataset(list, { name: "hf_gsm8k.jsonl" });
    expect([r.format, r.cases.length, r.label?.column]).toEqual(["lm-eval", 10, "exact_match"]);
    // A JSONL file that merely starts with a list line is still read line by line.
    const lines = await importDataset('[1, 2]\n{"input": "a"}\n', { name: "rows.jsonl" });
    expect([lines.format, lines.cases.length, lines.problems.map((p) => p.line)]).toEqual(["jsonl", 1, [1]]);
  });

  it("samples written one per line into a .json file are found by their content", async () => {
    const name = "samples_arc_easy_2024-05-29T10-00-00.123456.json";
    expect(detectFormat(name, log(name))).toBe("lm-eval");
    const r = await read(name);
    expect(r.cases.map((c) => [c.id, c.label])).toEqual([
      ["0", true],
      ["1", false],
      ["2", true],
      ["3", false],
    ]);
    expect(r.label).toMatchObject({ column: "acc", choices: ["acc_norm"] });
  });

  it("an aggregate results file is named as one, pointing at the samples file beside it, whatever format is asked", async () => {
    const name = "results_2026-06-01T10-00-00.123456.json";
    const message =
      /lm-evaluation-harness results file: aggregate scores for 1 task\(s\) \(truthfulqa_gen\), with no per-sample verdicts\. Import the samples file\(s\) next to it instead: samples_truthfulqa_gen_2026-06-01T10-00-00\.123456\.jsonl/;
    await expect(read(name)).rejects.toThrow(message);
    await expect(read(name, { format: "promptfoo" })).rejects.toThrow(message);
    await expect(read(name, { format: "lm-eval" })).rejects.toThrow(message);
    await expect(read(name)).rejects.toBeInstanceOf(UnreadableFileError);
  });
});

describe("promptfoo", () => {
  it("expected answers from vars.__expected, the test's assertions and the graded assertions", async () => {
    const r = await read("promptfoo-expected.json");
    expect(r.cases.map((c) => [c.id, c.label, c.expected])).toEqual([
      ["0", true, "Paris"],
      ["1", false, "Lima"],
      ["2", true, "N'Djamena"],
      ["3", false, undefined],
      ["4", true, "Muscat"],
    ]);
    expect(r.cases[0]!.meta["vars.__expected"]).toBeUndefined();
    expect(r.label).toMatchObject({
      column: "success",
      derived: ["success", "score", "reason", "failureReason", "namedScores.accuracy"],
    });
  });

  it("a serialised Eval object with no results says where its results are", async () => {
    const r = await read("promptfoo-eval-object.json");
    expect(r.cases).toEqual([]);
    expect(r.warnings).toEqual([
      expect.objectContaining({
        code: "no-samples",
        message: expect.stringMatching(/serialised promptfoo Eval, whose results stay in promptfoo's database/),
      }),
    ]);
  });
});

describe("JSONL logs as tables", () => {
  const lines = [
    '{"id":"a","passed":true,"v":1}',
    '{"id":"b","passed":false,"v":1e999}',
    '{"id": "torn',
    "null",
    '{"id":"c","passed":"yes","v":NaN}',
    '{"id":"d","passed":0,"v":2,"meta":{"k":1}}',
  ].join("\n");

  it("torn, invalid and null lines are problems of their line; --label passed is found as in CSV; 1e999 and NaN are numbers", async () => {
    const byName = await importDataset(lines, { format: "jsonl", requireInput: false });
    const mapped = await importDataset(lines, { format: "jsonl", requireInput: false, mapping: { label: "passed" } });
    for (const r of [byName, mapped]) {
      expect(r.cases.map((c) => [c.id, c.label])).toEqual([
        ["a", true],
        ["b", false],
        ["c", true],
        ["d", false],
      ]);
      expect(r.problems.map((p) => [p.line, p.reason.split(" (")[0]])).toEqual([
        [3, "not JSON"],
        [4, "not an object"],
      ]);
      expect(r.cases.map((c) => c.meta.v)).toEqual([1, Infinity, NaN, 2]);
      expect(r.cases[3]!.meta).toEqual({ v: 2, k: 1 });
    }
    expect(byName.label).toMatchObject({ column: "passed", reason: "detected by its name" });
    expect(mapped.label).toMatchObject({ column: "passed", reason: "named with --label" });
    const csv = await importDataset("id,passed,v\na,true,1\nb,false,1\nc,yes,2\nd,0,2\n", {
      format: "csv",
      requireInput: false,
    });
    expect(csv.cases.map((c) => [c.id, c.label])).toEqual(byName.cases.map((c) => [c.id, c.label]));
  });

  it("says when the file is empty, or when every labelled case is of one class", async () => {
    expect((await importDataset("", { format: "jsonl" })).warnings).toEqual([
      { code: "empty", message: "the file holds no rows", count: 0 },
    ]);
    const oneClass = await importDataset('{"id":1,"passed":1}\n{"id":2,"passed":1}\n', { requireInput: false });
    expect(oneClass.warnings).toEqual([
      expect.objectContaining({
        code: "one-class",
        message: "every labelled case passes (2 by 'passed'): there is no failure to explain",
      }),
    ]);
  });

  it("a JSON list of rows reads as JSONL rows", async () => {
    const r = await importDataset('[{"input":"a","passed":1},{"input":"b","passed":0}, 7]', { name: "rows.json" });
    expect(r.format).toBe("jsonl");
    expect(r.cases.map((c) => [c.input.prompt, c.label])).toEqual([
      ["a", true],
      ["b", false],
    ]);
    expect(r.problems.map((p) => p.line)).toEqual([3]);
  });

  it("importStream says the label and the warnings in its batches", async () => {
    const batches = [];
    for await (const batch of importStream(log("cancelled.eval"), { name: "cancelled.eval" })) batches.push(batch);
    expect(batches.flatMap((b) => b.warnings ?? []).map((w) => w.code)).toEqual([
      "run-cancelled",
      "sample-errors",
      "unlabelled",
      "no-image",
    ]);
    expect(batches.find((b) => b.label)?.label?.column).toBe("score.match");
  });
});
