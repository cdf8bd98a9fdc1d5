import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cut } from "./fixtures/cut.ts";
import { detectFormat, importDataset, importStream, parseJsonl, UnreadableFileError } from "./import.ts";
import { importTable } from "./table.ts";
import type { ImportResult } from "./types.ts";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`./fixtures/${name}`, import.meta.url)));
const images = {
  async read(ref: string) {
    try {
      return fixture(ref);
    } catch {
      return undefined;
    }
  },
};
const RED = "sha256:c414cd0e204de974f73753c7e28d7638e7b3691bb8b1a2bab6b25bb7fed7ce77";
const lines = (r: ImportResult) => r.problems.map((p) => p.line);

describe("JSONL", () => {
  it("keeps every valid row of the hostile fixture and names each bad one with its line", async () => {
    const stored: string[] = [];
    const r = await importDataset(fixture("dataset.jsonl"), {
      name: "dataset.jsonl",
      images: { ...images, put: async (hash) => void stored.push(hash) },
    });
    expect(r.format).toBe("jsonl");
    expect(r.cases.map((c) => c.id)).toEqual(["q1", "q2", "f0c5d7b64eee", "q9", "10"]);
    expect(r.rows).toBe(15); // 16 lines, one blank
    const reasons = Object.fromEntries(r.problems.map((p) => [p.line, p.reason]));
    expect(reasons[3]).toMatch(/^not JSON/);
    expect(reasons[4]).toMatch(/^not an object \(a list\)/);
    expect(reasons[5]).toMatch(/^missing input/);
    expect(reasons[6]).toBe("duplicate id 'q1' (first on line 1)");
    expect(reasons[7]).toMatch(/^unknown status "deleted"/);
    expect(reasons[9]).toMatch(/^image not found: 'images\/missing.png'/);
    expect(reasons[10]).toMatch(/not decodable: a truncated PNG/);
    expect(reasons[11]).toMatch(/not decodable: not an image/);
    expect(reasons[12]).toMatch(/^not valid UTF-8/);
    expect(reasons[16]).toMatch(/^not JSON/); // the truncated last line
    expect(lines(r)).toEqual([3, 4, 5, 6, 7, 9, 10, 11, 12, 16]);
    // A path and a data URL of the same bytes are one image, stored once.
    expect(r.cases[0]!.input.image).toBe(RED);
    expect(r.cases[3]!.input.image).toBe(RED);
    expect(stored).toEqual([RED]);
    // CRLF lines parse; a BOM does not reach the first row; other keys land in meta.
    expect(r.cases[1]).toMatchObject({ id: "q2", expected: "red", split: "popular", meta: { difficulty: 3 } });
    expect(r.cases[2]).toMatchObject({ status: "archived", meta: { source: "hand" } });
    expect(r.cases[4]).toMatchObject({ id: "10", tags: ["a", "b"], split: "adversarial" });
  });

  it("gives the same result however the stream is cut (lines and UTF-8 sequences split across chunks)", async () => {
    const bytes = fixture("dataset.jsonl");
    const whole = await parseJsonl(bytes);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 30 }), async (points) => {
        expect(await parseJsonl(cut(bytes, points))).toEqual(whole);
      }),
      { numRuns: 60 },
    );
  });

  it("reads a 5 MB single line, a string source, and a web ReadableStream", async () => {
    const prompt = "x".repeat(5 * 1024 * 1024);
    const text = `{"id":"small","input":"a"}\n{"id":"huge","input":${JSON.stringify(prompt)}}\n{"id":"after","input":"b"}`;
    const bytes = new TextEncoder().encode(text);
    const r = await parseJsonl(
      cut(
        bytes,
        Array.from({ length: 100 }, (_, i) => i * 65536),
      ),
    );
    expect(r.problems).toEqual([]);
    expect(r.cases.map((c) => c.id)).toEqual(["small", "huge", "after"]);
    expect(r.cases[1]!.input.prompt.length).toBe(prompt.length);
    expect((await parseJsonl(text)).cases.length).toBe(3);
    expect((await parseJsonl(new Blob([bytes]).stream())).cases.length).toBe(3);
  });

  it("mixes CRLF and LF, skips blank lines, and without an image source leaves references unchecked", async () => {
    const r = await parseJsonl(
      '{"input":"a"}\r\n\r\n{"input":{"prompt":"b","image":"nowhere.png"}}\n\n{"input":"c"}\r\n',
    );
    expect(r.problems).toEqual([]);
    expect(r.cases.map((c) => c.input.prompt)).toEqual(["a", "b", "c"]);
    expect(r.cases[1]!.input.image).toBe("nowhere.png");
  });

  it("reports wrong field types by name", async () => {
    const r = await parseJsonl(
      [
        '{"id":{"x":1},"input":"a"}',
        '{"input":{"image":"a.png"}}',
        '{"input":"a","tags":[1]}',
        '{"input":"a","meta":[1]}',
        '{"input":"a","split":true}',
        '{"input":7}',
      ].join("\n"),
    );
    expect(r.problems.map((p) => p.reason.split(",")[0])).toEqual([
      "id must be a string or a number",
      "input.prompt must be a string",
      "tags must be a list of strings",
      "meta must be an object",
      "split must be a string",
      'input must be a string or {"prompt"',
    ]);
  });

  it("streams in batches that together hold every row", async () => {
    const body = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: `r${i}`, input: `p${i}` })).join("\n");
    const bytes = new TextEncoder().encode(body);
    let count = 0;
    let batches = 0;
    for await (const batch of importStream(cut(bytes, [10000, 20000, 40000, 80000]), { format: "jsonl" })) {
      count += batch.cases.length;
      batches++;
    }
    expect(count).toBe(5000);
    expect(batches).toBeGreaterThan(1);
  });
});

describe("CSV", () => {
  it("handles BOM, mixed CRLF/LF, quoted delimiters, quotes and newlines, and names bad records by line", async () => {
    const r = await importDataset(fixture("table.csv"), { name: "table.csv" });
    expect(r.format).toBe("csv");
    expect(r.cases.map((c) => c.id)).toEqual(["c1", "c2", "c3", "c6"]);
    expect(r.cases.map((c) => c.input.prompt)).toEqual([
      "Hello, world",
      "Line one\nline two",
      'He said "yes"',
      "Unicode: café ☕",
    ]);
    expect(r.cases.map((c) => c.label)).toEqual([true, false, true, true]);
    expect(r.cases[0]).toMatchObject({ expected: "hi", cluster: "g1", meta: { latency_ms: 120 } });
    expect(r.problems).toEqual([
      { line: 6, reason: "has 3 fields where the header has 6; quote fields that contain the delimiter" },
      { line: 7, reason: "not valid UTF-8; re-save the file as UTF-8" },
      { line: 9, reason: "duplicate id 'c1' (first on line 2)", id: "c1" },
    ]);
  });

  it("detects or takes a custom delimiter, and takes an explicit column mapping", async () => {
    const auto = await importDataset(fixture("semicolon.csv"), { name: "semicolon.csv" });
    expect(auto.cases.map((c) => [c.id, c.input.prompt, c.expected, c.label])).toEqual([
      ["s1", "a;b", "c", true],
      ["s2", "plain", "d", false],
    ]);
    const tsv = "key\ttext\tok\tgroup\n1\thello\tfail\tA\n2\tbye\tpass\tA\n";
    const mapped = await importDataset(tsv, {
      format: "csv",
      delimiter: "\t",
      mapping: { id: "key", input: "text", label: "ok", cluster: "group" },
    });
    expect(mapped.cases.map((c) => [c.id, c.input.prompt, c.label, c.cluster])).toEqual([
      ["1", "hello", false, "A"],
      ["2", "bye", true, "A"],
    ]);
    await expect(importDataset(tsv, { format: "csv", delimiter: "\t", mapping: { label: "nope" } })).rejects.toThrow(
      /label column 'nope' is not in the file/,
    );
  });

  it("reads the non-finite numbers Python and pandas write (nan, inf, -inf, 1e999) as numbers, like a JSON log", async () => {
    const r = await importDataset("id,input,x\na,p,nan\nb,p,-inf\nc,p,1e999\nd,p,Nan\ne,p,2.5\n", { format: "csv" });
    expect(r.cases.map((c) => c.meta.x)).toEqual([NaN, -Infinity, Infinity, "Nan", 2.5]);
  });

  it("an unterminated quote is one problem at its record; rows before it are kept", async () => {
    const r = await importDataset('id,input\na,one\nb,"never closed\nc,three\n', { format: "csv" });
    expect(r.cases.map((c) => c.id)).toEqual(["a"]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]!.line).toBe(3);
    expect(r.problems[0]!.reason).toMatch(/Quoted field unterminated/);
  });
});

describe("Parquet", () => {
  it("reads nested struct and list columns, int64, and names bad rows by row number", async () => {
    const r = await importDataset(fixture("nested.parquet"), { name: "nested.parquet", images });
    expect(r.format).toBe("parquet");
    expect(r.cases.map((c) => c.id)).toEqual(["p1", "p2", "6c9220b11278"]);
    expect(r.cases[0]).toMatchObject({
      input: { prompt: "Is there a dog?", image: RED },
      tags: ["pope", "animal"],
      label: true,
      meta: { score: 0.9, tokens: 12, detail: { a: 1, b: [1, 2] } },
    });
    expect(r.cases[1]!.input).toEqual({ prompt: "What is 2+2?" });
    expect(r.problems.map((p) => [p.line, p.reason.split(":")[0]])).toEqual([
      [3, "image not found"],
      [4, 'missing input; give "input"'],
    ]);
  });

  it("a file that is not Parquet cannot be read at all", async () => {
    await expect(importDataset(new Uint8Array([1, 2, 3, 4]), { format: "parquet" })).rejects.toBeInstanceOf(
      UnreadableFileError,
    );
  });
});

describe("eval logs", () => {
  it("lm-evaluation-harness samples: doc_id, prompt, target, and the first metric as the label", async () => {
    const name = "samples_arc_easy_2024-05-01T12-00-00.jsonl";
    const r = await importDataset(fixture(name), { name });
    expect(r.format).toBe("lm-eval");
    expect(r.cases.map((c) => [c.id, c.label, c.expected])).toEqual([
      ["0", true, 2],
      ["1", false, 1],
      ["2", true, " wind"],
    ]);
    expect(r.cases[0]!.input.prompt).toMatch(/^Question: An astronomer/);
    expect(r.cases[2]!.input.prompt).toBe("Question: Which is a renewable resource?\nAnswer:");
    expect(r.cases[1]!.meta).toMatchObject({ acc: 0, acc_norm: 1, "doc.answerKey": "B" });
    expect(r.problems.map((p) => [p.line, p.reason.split(" (")[0]!.split(";")[0]])).toEqual([
      [4, "duplicate id '2'"],
      [5, "missing input"],
    ]);
  });

  it("Inspect AI log: last user message (with its image), target, C/I scores as the label", async () => {
    const r = await importDataset(fixture("inspect-pope.json"), { name: "inspect-pope.json", images });
    expect(r.format).toBe("inspect");
    expect(r.cases.map((c) => [c.id, c.label, c.input.prompt])).toEqual([
      ["pope-1", true, "Is there a dog in the image?"],
      ["pope-2", false, "Is there a cat in the image?"],
      ["3", undefined, "Is there a car?"],
    ]);
    expect(r.cases[0]!.input.image).toBe(RED);
    expect(r.cases[0]!.meta).toMatchObject({ "score.match": 1, "metadata.category": "adversarial", output: "Yes" });
    expect(r.cases[1]!.meta).toMatchObject({ "score.length": 11, output: "Yes, a cat." });
    expect(r.problems.map((p) => [p.line, p.reason.split(";")[0]])).toEqual([[4, "missing input"]]);
  });

  it("promptfoo results: rendered prompt, vars.expected, success as the label, vars and metrics as signals", async () => {
    const r = await importDataset(fixture("promptfoo-results.json"), { name: "promptfoo-results.json" });
    expect(r.format).toBe("promptfoo");
    expect(r.cases.map((c) => [c.id, c.label, c.expected])).toEqual([
      ["0", true, "Bonjour"],
      ["1", false, "Bonne nuit"],
    ]);
    expect(r.cases[1]!.meta).toMatchObject({ latencyMs: 380, "vars.text": "Good night", output: "Bonsoir" });
    expect(r.problems.map((p) => p.line)).toEqual([3]);
  });

  it("an explicit format reads a tool's log whatever the file is called", async () => {
    const inspect = await importDataset(fixture("inspect-pope.json"), { name: "log.txt", format: "inspect", images });
    expect(inspect).toEqual(await importDataset(fixture("inspect-pope.json"), { name: "inspect-pope.json", images }));
    const promptfoo = await importDataset(fixture("promptfoo-results.json"), { format: "promptfoo" });
    expect(promptfoo).toEqual(await importDataset(fixture("promptfoo-results.json"), { name: "results.json" }));
    await expect(importDataset(fixture("promptfoo-results.json"), { format: "inspect" })).rejects.toThrow(
      /not an Inspect AI eval log/,
    );
  });

  it("a JSON file that is neither tool's log cannot be read; format detection follows names and bytes", async () => {
    await expect(importDataset('{"hello": 1}', { name: "x.json" })).rejects.toThrow(
      /not a log this tool reads: it is an object with keys \[hello\]/,
    );
    await expect(importDataset("{broken", { name: "x.json" })).rejects.toBeInstanceOf(UnreadableFileError);
    expect(detectFormat("samples_gsm8k_2024.jsonl", "")).toBe("lm-eval");
    expect(detectFormat(undefined, '{"doc_id": 1, "resps": []}\n')).toBe("lm-eval");
    expect(detectFormat(undefined, '{"input": "a"}\n')).toBe("jsonl");
    expect(detectFormat(undefined, "PAR1....")).toBe("parquet");
    expect(detectFormat(undefined, "id,input\n")).toBe("csv");
  });
});

describe("requireInput: false (eval logs read for their labels only)", () => {
  it("a row without input becomes a case with an empty prompt instead of a problem, in every format", async () => {
    const name = "samples_arc_easy_2024-05-01T12-00-00.jsonl";
    const lm = await importDataset(fixture(name), { name, requireInput: false });
    expect(lm.cases.map((c) => c.id)).toEqual(["0", "1", "2", "4"]);
    expect(lm.cases[3]).toMatchObject({ input: { prompt: "" }, label: false });
    const jsonl = await parseJsonl('{"id":"a","passed":true}\n{"id":"b","label":0}\n', { requireInput: false });
    expect(jsonl.problems).toEqual([]);
    expect(jsonl.cases.map((c) => [c.id, c.label ?? c.meta.passed])).toEqual([
      ["a", true],
      ["b", false],
    ]);
    const csv = await importDataset("id,correct,len\n1,yes,3\n", { format: "csv", requireInput: false });
    expect(csv.cases[0]).toMatchObject({ input: { prompt: "" }, label: true, meta: { len: 3 } });
  });
});

describe("importTable", () => {
  it("maps columns, detects a verdict column only when every value is a verdict, keeps the rest as signals", () => {
    const rows = [
      { question: "a", correct: "yes", len: 3, label: "cat" },
      { question: "b", correct: "no", len: 5, label: "dog" },
    ];
    const t = importTable(rows);
    expect(t.mapping).toMatchObject({ input: "question", label: "correct" });
    expect(t.cases.map((c) => [c.input.prompt, c.label, c.meta])).toEqual([
      ["a", true, { len: 3, label: "cat" }],
      ["b", false, { len: 5, label: "dog" }],
    ]);
    const noInput = importTable([{ passed: 1, x: 0.2 }], {}, { requireInput: false });
    expect(noInput.cases[0]).toMatchObject({ input: { prompt: "" }, label: true, meta: { x: 0.2 } });
    const bad = importTable([{ input: "a", ok: "maybe" }], { label: "ok" });
    expect(bad.problems[0]!.reason).toMatch(/label "maybe" in column 'ok' is not a verdict/);
  });
});
