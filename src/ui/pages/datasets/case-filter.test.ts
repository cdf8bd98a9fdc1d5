import { describe, expect, it } from "vitest";
import { caseFilter, expectedText, FacetCounter, isEmptyFilter, rowView } from "./case-filter.ts";
import type { FilterableCase } from "./filter-expression.ts";
import { FilterSyntaxError } from "./filter-expression.ts";

const make = (id: string, over: Partial<FilterableCase> = {}): FilterableCase => ({
  id,
  input: { prompt: `question ${id}` },
  tags: [],
  status: "active",
  meta: {},
  ...over,
});

const cases = [
  make("pope-1", { split: "random", tags: ["pope", "color"], label: true, input: { prompt: "?", image: "sha256:a" } }),
  make("pope-2", { split: "adversarial", tags: ["pope"], label: false, input: { prompt: "?", image: "sha256:a" } }),
  make("POPE-3", { split: "adversarial", tags: ["pope", "color"], status: "archived" }),
  make("cap-1", { tags: ["caption"] }),
];
const ids = (filter: Parameters<typeof caseFilter>[0]) => cases.filter(caseFilter(filter)).map((c) => c.id);

describe("caseFilter", () => {
  it("combines split, tags, status, label, id and expression", () => {
    expect(ids({})).toHaveLength(4);
    expect(ids({ splits: ["adversarial"] })).toEqual(["pope-2", "POPE-3"]);
    expect(ids({ splits: [""] })).toEqual(["cap-1"]);
    expect(ids({ tags: ["pope", "color"] })).toEqual(["pope-1", "POPE-3"]);
    expect(ids({ status: "archived" })).toEqual(["POPE-3"]);
    expect(ids({ label: "pass" })).toEqual(["pope-1"]);
    expect(ids({ label: "fail" })).toEqual(["pope-2"]);
    expect(ids({ label: "none" })).toEqual(["POPE-3", "cap-1"]);
    expect(ids({ id: " pope " })).toEqual(["pope-1", "pope-2", "POPE-3"]);
    expect(ids({ id: "pope", expression: 'split == "adversarial" and "color" in tags' })).toEqual(["POPE-3"]);
  });

  it("throws the expression's syntax error", () => {
    expect(() => caseFilter({ expression: "split =" })).toThrow(FilterSyntaxError);
  });

  it("knows an empty filter", () => {
    expect(isEmptyFilter({})).toBe(true);
    expect(isEmptyFilter({ splits: [], tags: [], id: " ", expression: "" })).toBe(true);
    expect(isEmptyFilter({ label: "none" })).toBe(false);
  });
});

describe("FacetCounter", () => {
  it("counts splits, tags, statuses, labels and images", () => {
    const counter = new FacetCounter();
    for (const c of cases) counter.add(c);
    expect(counter.result()).toEqual({
      cases: 4,
      splits: [
        ["adversarial", 2],
        ["", 1],
        ["random", 1],
      ],
      tags: [
        ["pope", 3],
        ["color", 2],
        ["caption", 1],
      ],
      statuses: { active: 3, archived: 1 },
      labels: { pass: 1, fail: 1, none: 2 },
      withImage: 2,
      images: 1,
    });
  });
});

describe("rowView", () => {
  it("cuts long prompts and answers and keeps the rest", () => {
    const row = rowView(make("x", { input: { prompt: "p".repeat(500) }, expected: { answer: 4 }, label: false }), 7);
    expect(row.index).toBe(7);
    expect(row.prompt).toHaveLength(240);
    expect(row.prompt.endsWith("…")).toBe(true);
    expect(row.expected).toBe('{"answer":4}');
    expect(row.label).toBe(false);
    expect("image" in row).toBe(false);
  });

  it("writes expected answers as text", () => {
    expect(expectedText(undefined)).toBe("");
    expect(expectedText("yes")).toBe("yes");
    expect(expectedText(["yes", "y"])).toBe('["yes","y"]');
    expect(expectedText(4)).toBe("4");
  });
});
