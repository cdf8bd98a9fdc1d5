import { expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { labelEvaluators } from "./label-evaluators.ts";

let made = 0;
const make = (expected: unknown, meta: Record<string, unknown> = {}): FailureCase => ({
  id: `case-${made++}`,
  input: { prompt: "q" },
  expected,
  tags: [],
  status: "active",
  meta,
});

it("labels yes/no answers with yesNo, object lists with CHAIR over their vocabulary, anything else with exact", () => {
  expect(labelEvaluators([make(" Yes"), make("no")]).map((e) => e.name)).toEqual(["yesNo"]);
  const captions = labelEvaluators([make("a cat", { objects: ["cat"] }), make("a dog", { objects: ["dog", "ball"] })]);
  expect(captions.map((e) => e.name)).toEqual(["chair"]);
  expect(labelEvaluators([make("yes"), make("4")]).map((e) => e.name)).toEqual(["exact"]);
  expect(labelEvaluators([make("a cat", { objects: ["cat"] }), make("a dog")]).map((e) => e.name)).toEqual(["exact"]);
});

it("refuses an empty list with the reason", () => {
  expect(() => labelEvaluators([])).toThrow("labelEvaluators(): no case to label; select at least one case");
});
