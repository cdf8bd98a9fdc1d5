import { describe, expect, it } from "vitest";
import { extractYesNo, popeMetrics, yesNo } from "./yes-no.ts";
import { ctx } from "./testing.ts";

describe("yesNo", () => {
  it("extracts yes / no / unknown and names the rule", () => {
    expect(extractYesNo("Yes, there is a red circle.")).toEqual({ answer: "yes", rule: "first-word" });
    expect(extractYesNo("no .")).toEqual({ answer: "no", rule: "first-word" });
    expect(extractYesNo("I think yes")).toEqual({ answer: "yes", rule: "only-yes" });
    expect(extractYesNo("There isn't one")).toEqual({ answer: "no", rule: "only-negation" });
    expect(extractYesNo("there is not a circle")).toEqual({ answer: "no", rule: "only-negation" });
    expect(extractYesNo("yes and no")).toEqual({ answer: "yes", rule: "first-word" });
    expect(extractYesNo("maybe yes, maybe not")).toEqual({ answer: "unknown", rule: "both" });
    expect(extractYesNo("a red circle")).toEqual({ answer: "unknown", rule: "neither" });
    expect(extractYesNo("  ... ")).toEqual({ answer: "unknown", rule: "empty" });
  });
  it("checks against expected yes/no (or a boolean); unknown is a wrong answer", async () => {
    expect(await yesNo().check(ctx("yes", "Yes"))).toMatchObject({ passed: true, data: { answer: "yes" } });
    expect(await yesNo().check(ctx("no .", true))).toMatchObject({
      passed: false,
      reason: 'answered "no" (first-word), expected "yes"',
    });
    expect((await yesNo().check(ctx("circle", "no"))).passed).toBe(false);
    expect(() => yesNo().check(ctx("yes", "maybe"))).toThrow(/must be "yes" or "no"/);
  });
  it("aggregates POPE's accuracy, precision, recall, F1 and yes-ratio", () => {
    const r = (answer: string, expected: string) => ({ passed: answer === expected, data: { answer, expected } });
    // 2 TP, 1 FP, 1 FN (an unknown), 1 TN
    const m = popeMetrics([r("yes", "yes"), r("yes", "yes"), r("yes", "no"), r("unknown", "yes"), r("no", "no")]);
    expect(m).toEqual({
      accuracy: 3 / 5,
      yesRatio: 3 / 5,
      unknownRate: 1 / 5,
      precision: 2 / 3,
      recall: 2 / 3,
      f1: 2 / 3,
    });
  });
});
