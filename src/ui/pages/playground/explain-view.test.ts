import { describe, expect, it } from "vitest";
import type { Explanation } from "../../../../workers/explain.ts";
import { imageMap, judgeAnswer, strongestKeys, tokenColours, tokenText, uncertainty } from "./explain-view.ts";

/** 2 layers × 2 heads over a 1×2 grid: cell values encode (layer, head, cell) so averages are checkable. */
const ex = {
  grid: [1, 2],
  layers: 2,
  heads: 2,
  answerMaps: Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]),
  lastMaps: Float32Array.from([0, 1, 0, 1, 1, 0, 1, 0]),
  rollout: Float32Array.from([0.25, 0.75]),
} as unknown as Explanation;

describe("imageMap", () => {
  it("averages the heads of a layer, picks one head, averages every layer, or reads the rollout", () => {
    expect(imageMap(ex, { mode: "mean", layer: 0, head: 0 })).toEqual({
      values: [2, 3],
      label: "the answer's attention, layer 1, mean over heads",
    });
    expect(imageMap(ex, { mode: "head", layer: 1, head: 1 })?.values).toEqual([7, 8]);
    expect(imageMap(ex, { mode: "mean", layer: -1, head: 0 })?.values).toEqual([4, 5]);
    expect(imageMap(ex, { mode: "last", layer: 1, head: 0 })?.values).toEqual([1, 0]);
    expect(imageMap(ex, { mode: "rollout", layer: 0, head: 0 })?.values).toEqual([0.25, 0.75]);
  });

  it("has no map without an image, and names a layer or head that is not there", () => {
    expect(
      imageMap({ ...ex, grid: undefined } as unknown as Explanation, { mode: "mean", layer: 0, head: 0 }),
    ).toBeUndefined();
    expect(() => imageMap(ex, { mode: "mean", layer: 2, head: 0 })).toThrow("layer 3 is not one of 1…2");
    expect(() => imageMap(ex, { mode: "head", layer: 0, head: 5 })).toThrow("head 6 is not one of 1…2");
  });
});

it("colours a token by how unsure it was, by entropy or by top-1 margin, with readable text", () => {
  expect(uncertainty({ entropy: 1, margin: 0.2 }, "entropy")).toBe(0.5);
  expect(uncertainty({ entropy: 9, margin: 0.2 }, "entropy")).toBe(1);
  expect(uncertainty({ entropy: 1, margin: 0.2 }, "margin")).toBeCloseTo(0.8, 12);
  expect(uncertainty({ entropy: Number.NaN, margin: 0.2 }, "entropy")).toBeNaN();
  expect(tokenColours(0).text).toBe("#ffffff");
  expect(tokenColours(1).text).toBe("#1d1d1f");
  expect(tokenColours(Number.NaN).background).toBe("var(--panel)");
});

it("lists the keys a query row attends to most", () => {
  const m = [1, 0, 0, 0.5, 0.5, 0, 0.2, 0.7, 0.1];
  expect(strongestKeys(m, 3, 2, 2)).toEqual([
    { key: 1, weight: 0.7 },
    { key: 0, weight: 0.2 },
  ]);
  expect(() => strongestKeys(m, 3, 3)).toThrow("query 3 is outside a 3-token matrix");
});

it("shows tokens as a person reads them", () => {
  expect(tokenText("Ġyes")).toBe("·yes");
  expect(tokenText("▁no")).toBe("·no");
  expect(tokenText("")).toBe("∅");
});

it("judges an answer as an investigation labels it: yes/no extraction for yes/no cases, else normalised exact match", async () => {
  expect(await judgeAnswer("Yes, there is.", { expected: "yes" })).toEqual({ passed: true, by: "yesNo" });
  expect(await judgeAnswer("no", { expected: "Yes" })).toMatchObject({
    passed: false,
    by: "yesNo",
    reason: expect.stringContaining('expected "yes"'),
  });
  expect(await judgeAnswer("  A red  Square ", { expected: "a red square" })).toEqual({ passed: true, by: "exact" });
  expect(await judgeAnswer("a blue square", { expected: "a red square" })).toMatchObject({
    passed: false,
    by: "exact",
  });
  expect(await judgeAnswer("anything", { expected: undefined })).toBeUndefined();
});
