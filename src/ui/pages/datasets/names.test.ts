import { describe, expect, it } from "vitest";
import { datasetIdFromFile, datasetIdProblem, freeDatasetId, sortDropped } from "./names.ts";

describe("datasetIdFromFile", () => {
  it("drops folders and the extension", () => {
    expect(datasetIdFromFile("pope.jsonl")).toBe("pope");
    expect(datasetIdFromFile("pope/pope.jsonl")).toBe("pope");
    expect(datasetIdFromFile("C:\\data\\my set.CSV")).toBe("my-set");
    expect(datasetIdFromFile("logs/2024-05-01_arc.eval")).toBe("2024-05-01_arc");
    expect(datasetIdFromFile("samples_arc_easy.jsonl")).toBe("samples_arc_easy");
    expect(datasetIdFromFile(".jsonl")).toBe("dataset");
  });
});

describe("freeDatasetId", () => {
  it("keeps a free id and counts up from a taken one", () => {
    expect(freeDatasetId("pope", [])).toBe("pope");
    expect(freeDatasetId("pope", ["pope"])).toBe("pope-2");
    expect(freeDatasetId("pope", ["pope", "pope-2", "pope-3"])).toBe("pope-4");
    expect(freeDatasetId("pope-2", ["pope", "pope-2"])).toBe("pope-3");
  });
});

describe("datasetIdProblem", () => {
  it("says what is wrong with a name", () => {
    expect(datasetIdProblem("pope")).toBeUndefined();
    expect(datasetIdProblem("")).toBe("give the dataset a name");
    expect(datasetIdProblem("pope ")).toBe("the name starts or ends with a space");
    expect(datasetIdProblem("a".repeat(101))).toBe("the name is 101 characters; keep it to 100");
    expect(datasetIdProblem("a\tb")).toBe("the name holds a control character (a tab or a line break)");
  });
});

describe("sortDropped", () => {
  it("tells datasets from images and other files, top-level datasets first", () => {
    const files = [
      { path: "pope/images/a.png" },
      { path: "pope/old/pope.jsonl" },
      { path: "pope/pope.jsonl" },
      { path: "pope/README.md" },
      { path: "pope/.DS_Store" },
      { path: "pope/images/b.JPG" },
      { path: "pope/results.parquet" },
    ];
    expect(sortDropped(files)).toEqual({ data: [2, 6, 1], images: [0, 5], other: [3, 4] });
  });
});
