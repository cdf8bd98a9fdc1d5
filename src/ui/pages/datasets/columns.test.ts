import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { jsonlColumns, tableColumns } from "./columns.ts";

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../../datasets/fixtures/${name}`, import.meta.url)));
const csv = (text: string) => new TextEncoder().encode(text);

describe("tableColumns", () => {
  it("detects the mapping the importer uses for a CSV", async () => {
    expect(await tableColumns("csv", fixture("table.csv"))).toEqual({
      columns: ["id", "prompt", "expected", "passed", "cluster", "latency_ms"],
      mapping: { id: "id", input: "prompt", expected: "expected", label: "passed", cluster: "cluster" },
    });
    expect(await tableColumns("csv", fixture("semicolon.csv"))).toEqual({
      columns: ["id", "question", "answer", "correct"],
      mapping: { id: "id", input: "question", expected: "answer", label: "correct" },
    });
  });

  it("takes the user's mapping, and says when it names a column that is not there", async () => {
    const bytes = csv("q,a,ok,grade\nhi,there,yes,0.5\n");
    expect(await tableColumns("csv", bytes, { mapping: { input: "a", expected: "q" } })).toEqual({
      columns: ["q", "a", "ok", "grade"],
      mapping: { input: "a", expected: "q" },
    });
    const wrong = await tableColumns("csv", bytes, { mapping: { label: "verdict" } });
    expect(wrong).toEqual({
      columns: ["q", "a", "ok", "grade"],
      mappingError: "column mapping: label column 'verdict' is not in the file; columns are ['q', 'a', 'ok', 'grade']",
    });
  });

  it("detects a label column only when every value is a verdict", async () => {
    const mixed = csv("prompt,correct\na,yes\nb,maybe\n");
    expect(await tableColumns("csv", mixed)).toEqual({ columns: ["prompt", "correct"], mapping: { input: "prompt" } });
  });

  it("reads a Parquet file's columns, nested ones included", async () => {
    expect(await tableColumns("parquet", fixture("nested.parquet"))).toEqual({
      columns: ["id", "input", "tags", "passed", "score", "tokens", "detail"],
      mapping: { id: "id", input: "input", tags: "tags", label: "passed" },
    });
    expect(await tableColumns("parquet", csv("not parquet"))).toEqual({ columns: [], mapping: {} });
  });
});

describe("jsonlColumns", () => {
  it("says nothing for rows in the dataset format", () => {
    expect(jsonlColumns([{ id: "a", input: "hi", expected: "x", difficulty: 3 }])).toBeUndefined();
  });

  it("maps rows that name their fields otherwise, as the importer does", () => {
    expect(
      jsonlColumns([
        { question: "2+2?", answer: "4", correct: true },
        { question: "3+3?", answer: "6" },
      ]),
    ).toEqual({
      columns: ["question", "answer", "correct"],
      mapping: { input: "question", expected: "answer", label: "correct" },
    });
    expect(jsonlColumns([{ id: "a", input: "hi", verdict: "pass" }], { label: "verdict" })).toEqual({
      columns: ["id", "input", "verdict"],
      mapping: { id: "id", input: "input", label: "verdict" },
    });
    expect(jsonlColumns([{ input: "hi" }], { label: "nope" })).toEqual({
      columns: ["input"],
      mappingError: "column mapping: label column 'nope' is not in the file; columns are ['input']",
    });
  });
});
