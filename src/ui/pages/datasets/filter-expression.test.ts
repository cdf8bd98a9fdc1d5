import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compileFilter, FilterSyntaxError, parseFilter, type FilterableCase } from "./filter-expression.ts";

const make = (over: Partial<FilterableCase> = {}): FilterableCase => ({
  id: "pope-adv-0001",
  input: { prompt: "is there a red circle?", image: "sha256:ab" },
  expected: "yes",
  tags: ["pope", "color"],
  split: "adversarial",
  cluster: "scene-1",
  status: "active",
  meta: { difficulty: 3, object: "red circle", nested: { depth: 2 }, "odd key": "x", list: [1, 2] },
  ...over,
});

const cases: FilterableCase[] = [
  make(),
  make({ id: "a2", label: true }),
  make({ id: "a3", label: false, tags: ["pope"] }),
  make({ id: "r1", split: "random", tags: [], meta: { difficulty: 1 } }),
  make({ id: "r2", split: undefined, status: "archived", expected: undefined }),
];
const ids = (source: string) => cases.filter(compileFilter(source)).map((c) => c.id);

/** The error a bad expression gives: its column and its text. */
function failure(source: string): { column: number; message: string } {
  try {
    parseFilter(source);
  } catch (error) {
    if (error instanceof FilterSyntaxError) return { column: error.position + 1, message: error.message };
    throw error;
  }
  throw new Error(`'${source}' parsed`);
}

describe("compileFilter", () => {
  it("keeps every case for an empty expression", () => {
    expect(ids("")).toHaveLength(5);
    expect(ids("   ")).toHaveLength(5);
  });

  it("reads the example of the issue: split, tag membership and a missing label", () => {
    expect(ids('split == "adversarial" and "color" in tags and not label')).toEqual(["pope-adv-0001"]);
    expect(ids('split == "adversarial" && "color" in tags && !label')).toEqual(["pope-adv-0001"]);
  });

  it("compares numbers and strings, and nothing else", () => {
    expect(ids("meta.difficulty >= 3")).toEqual(["pope-adv-0001", "a2", "a3", "r2"]);
    expect(ids("meta.difficulty < 2")).toEqual(["r1"]);
    expect(ids('id < "b"')).toEqual(["a2", "a3"]);
    expect(ids('meta.difficulty > "2"')).toEqual([]);
    expect(ids("meta.difficulty == -1 or meta.difficulty == 1.0")).toEqual(["r1"]);
  });

  it("treats a missing field as null", () => {
    expect(ids("split == null")).toEqual(["r2"]);
    expect(ids('split != "adversarial"')).toEqual(["r1", "r2"]);
    expect(ids("not expected")).toEqual(["r2"]);
    expect(ids("meta.nowhere == null and meta.nested.depth == 2")).toEqual(["pope-adv-0001", "a2", "a3", "r2"]);
    expect(ids("label == true")).toEqual(["a2"]);
    expect(ids("label == false")).toEqual(["a3"]);
    expect(ids("label == null")).toEqual(["pope-adv-0001", "r1", "r2"]);
  });

  it("has in, not in, contains and matches", () => {
    expect(ids('split in ["random", "popular"]')).toEqual(["r1"]);
    expect(ids('split not in ["adversarial"]')).toEqual(["r1", "r2"]);
    expect(ids('"red" in prompt and id contains "pope"')).toEqual(["pope-adv-0001"]);
    expect(ids('tags contains "color" and not ("x" in tags)')).toEqual(["pope-adv-0001", "a2", "r2"]);
    expect(ids('prompt matches "^is there" and id matches "^r\\\\d$"')).toEqual(["r1", "r2"]);
    expect(ids('"odd key" in meta and meta["odd key"] == "x"')).toEqual(["pope-adv-0001", "a2", "a3", "r2"]);
    expect(ids("meta.list == [1, 2]")).toEqual(["pope-adv-0001", "a2", "a3", "r2"]);
    expect(ids("meta.list == [1, 2] and tags == []")).toEqual([]);
    expect(ids("tags == []")).toEqual(["r1"]);
    expect(ids("input.image == image and input.prompt == prompt and input == prompt")).toHaveLength(5);
  });

  it("binds not tighter than and, and and tighter than or", () => {
    expect(ids('id == "r1" or id == "a2" and label')).toEqual(["a2", "r1"]);
    expect(ids('(id == "r1" or id == "a2") and label')).toEqual(["a2"]);
    expect(ids('not status == "archived" and not split == "adversarial"')).toEqual(["r1"]);
  });

  it("reads single quotes and escapes", () => {
    expect(ids("split == 'random'")).toEqual(["r1"]);
    expect(compileFilter('prompt == "say \\"hi\\""')(make({ input: { prompt: 'say "hi"' } }))).toBe(true);
  });

  it("never runs the text as code", () => {
    const evil = 'constructor == "x" or __proto__ == null';
    expect(() => compileFilter(evil)).toThrow(FilterSyntaxError);
    expect(ids('meta.constructor == null and meta.__proto__ == null and "toString" in meta')).toEqual([]);
  });

  it("is total: any text either throws a FilterSyntaxError or gives a predicate that returns a boolean", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (source) => {
        let keep: ((c: FilterableCase) => boolean) | undefined;
        try {
          keep = compileFilter(source);
        } catch (error) {
          expect(error).toBeInstanceOf(FilterSyntaxError);
          return;
        }
        for (const c of cases) expect(typeof keep(c)).toBe("boolean");
      }),
    );
  });
});

describe("FilterSyntaxError", () => {
  it("names the column and what was expected", () => {
    expect(failure('split = "x"')).toEqual({
      column: 7,
      message: "at column 7: '=' is not an operator; use == to compare",
    });
    expect(failure('split == "x" and')).toEqual({
      column: 17,
      message:
        'at column 17: expected a value (a field such as split or tags, a "string", a number, true, false, null, a [list] or ( … )), found the end of the expression',
    });
    expect(failure('spilt == "x"')).toEqual({
      column: 1,
      message:
        "at column 1: unknown field 'spilt' (did you mean 'split'?); fields are id, prompt, image, expected, split, cluster, status, label, tags, meta, meta.<key>, input.prompt and input.image",
    });
    expect(failure('split == "x')).toEqual({
      column: 10,
      message: 'at column 10: the string that starts here is not closed; expected a closing "',
    });
    expect(failure('(split == "x"')).toMatchObject({
      column: 14,
      message: expect.stringContaining("expected ')' to close the '(' at column 1"),
    });
    expect(failure('split == "x")')).toMatchObject({
      column: 13,
      message: expect.stringContaining("(a ')' without its '(')"),
    });
    expect(failure("split in [1 2]")).toMatchObject({
      column: 13,
      message: expect.stringContaining("expected ',' or ']'"),
    });
    expect(failure('prompt matches "("')).toMatchObject({
      column: 16,
      message: expect.stringContaining("not a regular expression"),
    });
    expect(failure("prompt matches split")).toMatchObject({
      column: 16,
      message: expect.stringContaining("after 'matches'"),
    });
    expect(failure("split.x == 1")).toMatchObject({
      column: 1,
      message: expect.stringContaining("'split' has no fields"),
    });
    expect(failure("meta. == 1")).toMatchObject({
      column: 7,
      message: expect.stringContaining("expected a key after '.'"),
    });
    expect(failure("split == #")).toMatchObject({ column: 10, message: "at column 10: unexpected character '#'" });
    expect(failure("and")).toMatchObject({ column: 1, message: expect.stringContaining("found 'and'") });
  });
});
