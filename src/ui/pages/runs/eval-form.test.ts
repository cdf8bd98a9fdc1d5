import { describe, expect, it } from "vitest";
import { DEFAULT_FIELDS, fieldsOf, formConfig, pageConfig } from "./eval-form.ts";

describe("formConfig", () => {
  it("writes the CLI's config format", () => {
    expect(formConfig({ ...DEFAULT_FIELDS, dataset: "pope", evaluators: { yesNo: true } }, "tiny-vlm")).toEqual({
      name: "pope-yesNo",
      dataset: "pope",
      model: "tiny-vlm",
      evaluators: ["yesNo"],
      repeats: 1,
      generation: { temperature: 0, maxNewTokens: 16 },
    });
    const full = formConfig(
      {
        ...DEFAULT_FIELDS,
        name: "pope-ab",
        dataset: "pope",
        split: "adversarial",
        tags: "color, shape",
        sample: "50",
        evaluators: { yesNo: true, regex: true },
        pattern: "^(yes|no)\\b",
        repeats: "3",
        cluster: true,
        temperature: "0.7",
        maxNewTokens: "3",
        seed: "7",
      },
      "tiny-vlm",
    );
    expect(full).toEqual({
      name: "pope-ab",
      dataset: "pope",
      select: { split: "adversarial", tags: ["color", "shape"], sample: 50 },
      model: "tiny-vlm",
      evaluators: ["yesNo", { type: "regex", pattern: "^(yes|no)\\b", flags: "i" }],
      repeats: 3,
      cluster: true,
      generation: { temperature: 0.7, maxNewTokens: 3, seed: 7 },
    });
    expect(formConfig(fieldsOf(full), "tiny-vlm")).toEqual(full);
  });

  it("names the field that is wrong", () => {
    const base = { ...DEFAULT_FIELDS, dataset: "pope", evaluators: { yesNo: true } };
    expect(() => formConfig({ ...base, dataset: "" }, "m")).toThrow(/^dataset: choose a stored dataset/);
    expect(() => formConfig({ ...base, evaluators: {} }, "m")).toThrow(/^evaluators: tick at least one/);
    expect(() => formConfig({ ...base, repeats: "0" }, "m")).toThrow("repeats: '0' is not a whole number ≥ 1");
    expect(() => formConfig({ ...base, sample: "ten" }, "m")).toThrow("sample: 'ten' is not a whole number ≥ 1");
    expect(() => formConfig({ ...base, temperature: "-1" }, "m")).toThrow("temperature: '-1' is not a number ≥ 0");
    expect(() => formConfig({ ...base, evaluators: { regex: true }, pattern: "(" }, "m")).toThrow(/^regex: /);
    expect(() => formConfig({ ...base, evaluators: { contains: true } }, "m")).toThrow(/^contains: give the texts/);
  });
});

describe("pageConfig", () => {
  const config = JSON.stringify({
    name: "pope",
    dataset: "public/demo/pope.jsonl",
    select: { sample: 50 },
    model: "tiny-vlm",
    evaluators: ["yesNo"],
    generation: { seed: 1 },
  });

  it("maps the config's dataset path onto the stored dataset the CLI would have made", () => {
    expect(pageConfig(config, [{ id: "captions" }, { id: "pope" }])).toMatchObject({ dataset: "pope", name: "pope" });
  });

  it("says which dataset to import first, and what is wrong with a broken file", () => {
    expect(() => pageConfig(config, [{ id: "captions" }])).toThrow(
      "the config names dataset 'public/demo/pope.jsonl' (id 'pope'), which is not stored in this browser; import pope.jsonl on the Datasets page first (stored: 'captions')",
    );
    expect(() => pageConfig("{", [])).toThrow(/^the config file is not JSON/);
    expect(() => pageConfig('{"dataset":"x.jsonl","model":"m","evaluators":["nope"]}', [])).toThrow(
      /^eval config: evaluators\[0\]/,
    );
  });
});

it("reads number inputs bound as numbers (or null when empty) like their text", () => {
  const fields = { ...DEFAULT_FIELDS, dataset: "pope", evaluators: { yesNo: true } };
  const asNumbers = { ...fields, sample: 50, repeats: 3, seed: null, temperature: 0 } as unknown as typeof fields;
  expect(formConfig(asNumbers, "m")).toMatchObject({
    select: { sample: 50 },
    repeats: 3,
    generation: { temperature: 0 },
  });
});
