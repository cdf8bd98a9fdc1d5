import { describe, expect, it } from "vitest";
import { Dataset } from "./dataset.ts";
import { parseJsonl } from "./import.ts";

describe("Dataset", () => {
  const load = async () => Dataset.from(await parseJsonl('{"id":"a","input":"x"}\n{"id":"b","input":"y"}\nnope\n'));

  it("keeps its import's problems and its version follows its cases", async () => {
    const ds = await load();
    expect(ds.size).toBe(2);
    expect(ds.problems().map((p) => p.line)).toEqual([3]);
    const before = ds.version;
    ds.update("a", { status: "archived" });
    expect(ds.version).not.toBe(before);
  });

  it("add appends new ids only and reports the rest", async () => {
    const ds = await load();
    const result = ds.add([{ id: "a", input: "changed" }, { id: "c", input: "z" }, { id: "d" }]);
    expect(result.added).toEqual(["c"]);
    expect(result.skipped).toEqual(["a"]);
    expect(result.problems.map((p) => [p.line, p.reason.split(";")[0]])).toEqual([[3, "missing input"]]);
    expect(ds.get("a")!.input.prompt).toBe("x");
    expect(ds.cases.map((c) => c.id)).toEqual(["a", "b", "c"]);
  });

  it("update edits one case and refuses input, id, unknown keys, unknown ids and bad values", async () => {
    const ds = await load();
    expect(ds.update("b", { tags: ["hard"], expected: "Y", split: "random" })).toMatchObject({
      id: "b",
      tags: ["hard"],
      expected: "Y",
      split: "random",
    });
    expect(() => ds.update("b", { input: "other" })).toThrow(
      "update('b'): a different input is a different case: add it and archive this one",
    );
    expect(() => ds.update("b", { id: "z" })).toThrow(/ids do not change/);
    expect(() => ds.update("b", { colour: "red" })).toThrow(/unknown key 'colour'/);
    expect(() => ds.update("zz", { tags: [] })).toThrow(/no case 'zz'/);
    expect(() => ds.update("b", { status: "gone" })).toThrow(/unknown status/);
    expect(ds.select({ tags: ["hard"] }).map((c) => c.id)).toEqual(["b"]);
    expect(ds.holdout(0, { by: "id" }).explore).toHaveLength(2);
  });
});
