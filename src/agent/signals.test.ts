import { describe, expect, it } from "vitest";
import { codeValues, typeSignal, typeSignals } from "./signals.ts";

describe("typeSignal: which test a column gets, or why none", () => {
  it("reads two-valued columns as binary, coding true/yes/1 as present", () => {
    const [s] = typeSignal("ok", ["yes", "no", "yes", "no", "no", "yes", "no", "yes", "no", "yes", "no"]).signals;
    expect(s!.kind).toBe("binary");
    expect(s!.level).toBe("yes");
    expect([...s!.values.slice(0, 3)]).toEqual([1, 0, 1]);
    const [b] = typeSignal("flag", [true, false, true, false, false, true, true, false, true, false]).signals;
    expect(b!.level).toBe("true");
  });

  it("codes the rarer level as present when no level reads as true", () => {
    const values = [...Array(7).fill("dog"), ...Array(5).fill("cat")];
    expect(typeSignal("pet", values).signals[0]!.level).toBe("cat");
  });

  it("separates numeric from ordinal, and refuses integer identifiers", () => {
    expect(typeSignal("x", [0.1, 0.5, 0.2, 0.9, 0.33, 0.12, 0.7, 0.8, 0.05, 0.4, 0.61, 0.77]).signals[0]!.kind).toBe(
      "numeric",
    );
    expect(typeSignal("stars", [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2]).signals[0]!.kind).toBe("ordinal");
    const row = typeSignal(
      "row",
      Array.from({ length: 40 }, (_, i) => i),
    );
    expect(row.signals).toHaveLength(0);
    expect(row.untestable[0]!.reason).toMatch(/identifier/);
  });

  it("refuses text identifiers, constants, empty and non-scalar columns with a reason", () => {
    expect(typeSignal("uid", ["a", "b", "c", "d"]).untestable[0]!.reason).toMatch(
      /identifier: every value is distinct/,
    );
    expect(typeSignal("model", ["m", "m", "m"]).untestable[0]!.reason).toMatch(
      /constant: every case has the value 'm'/,
    );
    expect(typeSignal("gone", [null, "", undefined]).untestable[0]!.reason).toMatch(/missing/);
    expect(typeSignal("objs", [{ a: 1 }, { a: 2 }]).untestable[0]!.reason).toMatch(/not one value per case/);
  });

  it("splits a few-level text column into one-vs-rest binary signals and names rare levels", () => {
    const values = [...Array(10).fill("red"), ...Array(10).fill("green"), ...Array(2).fill("blue")];
    const typed = typeSignal("color", values);
    expect(typed.signals.map((s) => s.name)).toEqual(["color=green", "color=red"]);
    expect(typed.untestable).toEqual([{ name: "color=blue", reason: expect.stringMatching(/2 of 22/) }]);
  });

  it("treats missing values as missing, not as a level", () => {
    const [s] = typeSignal("x", [1.5, null, 2.5, "", 3.25, 4.5]).signals;
    expect(Number.isNaN(s!.values[1]!)).toBe(true);
  });

  it("checks that every column has one value per case", () => {
    expect(() => typeSignals({ ids: ["a", "b"], failed: [true, false], columns: new Map([["x", [1]]]) })).toThrow(
      /column 'x' has 1 values for 2 cases/,
    );
  });
});

describe("codeValues: the one coding M2 (exploration) and M4 (sealed) share", () => {
  it("codes a sealed column exactly as typeSignal coded the exploration column", () => {
    const explore = ["yes", "no", "yes", "no", "no", "yes", "no", "yes", "no", "yes"];
    const [s] = typeSignal("ok", explore).signals;
    expect([...codeValues(explore, "binary", s!.level)]).toEqual([...s!.values]);
    // Missing values stay missing in either split: a non-finite number is not the level's absence.
    expect([...codeValues(["yes", " no ", "", null, NaN, "YES"], "binary", "yes")]).toEqual([1, 0, NaN, NaN, NaN, 0]);
    expect([...codeValues([0.5, " 2 ", "x", true, Infinity, "0x10"], "numeric")]).toEqual([0.5, 2, NaN, NaN, NaN, NaN]);
  });
});
