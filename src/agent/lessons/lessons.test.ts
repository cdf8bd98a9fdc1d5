import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateReport } from "../../report/schema.ts";
import { parseLesson } from "./lesson-schema.ts";
import { extractLessons, lessonPriors, orderByLessons, rankLessons, type Lesson } from "./lessons.ts";

const report = validateReport(
  JSON.parse(readFileSync(new URL("../../report/fixtures/cli-report-200.json", import.meta.url), "utf8")),
);
const AT = "2026-12-01T12:00:00.000Z";
const here = {
  model: { key: "tiny-vlm", family: "llava" },
  dataset: { fingerprint: "de23deb6d374", source: "pope.jsonl" },
};

describe("extractLessons", () => {
  it("leaves one lesson per hypothesis and failed repair, and says the loop repaired nothing", () => {
    const lessons = extractLessons(report, { at: AT });
    const kinds = lessons.map((l) => `${l.kind} ${l.subject}`);
    expect(kinds).toEqual([
      "supported logitLens.answerProb.S2",
      "supported tokenEntropy.answer",
      "inconclusive meta.object_is_pair_member",
      "inconclusive rollout.entropy",
      "repair-failed L1:prompt rewrite 'context'",
      "repair-failed L1:prompt rewrite 'restate'",
      "repair-failed L2:self-consistency over paraphrases",
      "repair-failed L2:crop and re-ask (four zoomed quadrants + full image)",
      "repair-failed L3a:attention-guided crop, chosen by confidence",
      "repair-failed L3b:attention +1 on image tokens",
      "repair-failed L3b:attention +2 on image tokens",
      "unresolved loop",
    ]);
    expect(lessons.at(-1)!.text).toMatch(/confirmed a hypothesis but no repair up to L\d\w? validated/);
    for (const l of lessons) {
      expect(l.model).toEqual(here.model);
      expect(l.dataset).toEqual(here.dataset);
      expect(parseLesson(JSON.parse(JSON.stringify(l)), "test")).toEqual(l);
    }
  });

  it("remembers modes, and calls one recurring when an earlier run had it", () => {
    const first = extractLessons(report, { at: AT, modes: [{ id: "mode-1", signal: "rollout.entropy", size: 12 }] });
    expect(first.filter((l) => l.kind === "mode").map((l) => l.subject)).toEqual(["rollout.entropy"]);
    const second = extractLessons(
      { ...report, runId: "next" },
      { at: AT, previous: first, modes: [{ id: "mode-2", signal: "rollout.entropy", size: 9 }] },
    );
    const recurring = second.find((l) => l.kind === "recurring-mode")!;
    expect(recurring.text).toMatch(/9 case\(s\) set apart by rollout.entropy, as in an earlier run/);
  });

  it("refuses a time that is not a time", () => {
    expect(() => extractLessons(report, { at: "yesterday" })).toThrow(/at must be an ISO 8601 time, got "yesterday"/);
  });
});

describe("rankLessons", () => {
  const lessons = extractLessons(report, { at: AT });

  it("halves a lesson's weight every 30 days, on an injected clock", () => {
    const at = (days: number) => new Date(Date.parse(AT) + days * 86_400_000);
    expect(rankLessons(lessons, { ...here, now: at(0) })[0]!.weight).toBe(1);
    expect(rankLessons(lessons, { ...here, now: at(30) })[0]!.weight).toBeCloseTo(0.5, 12);
    expect(rankLessons(lessons, { ...here, now: at(90) })[0]!.weight).toBeCloseTo(0.125, 12);
    expect(rankLessons(lessons, { ...here, now: at(10), halfLifeDays: 10 })[0]!.decay).toBeCloseTo(0.5, 12);
  });

  it("weighs similar models and datasets less, and leaves unrelated ones out", () => {
    const now = new Date(AT);
    const family = rankLessons(lessons, { ...here, model: { key: "tiny-vlm-v2", family: "llava" }, now });
    expect(family[0]!.relevance).toBe(0.75);
    const otherData = rankLessons(lessons, { ...here, dataset: { fingerprint: "x", source: "/data/pope.jsonl" }, now });
    expect(otherData[0]!.relevance).toBe(0.75);
    expect(
      rankLessons(lessons, { model: { key: "gpt2" }, dataset: { fingerprint: "y", source: "mmlu.jsonl" }, now }),
    ).toEqual([]);
    expect(rankLessons(lessons, { ...here, now, top: 3 })).toHaveLength(3);
  });

  it("turns lessons into priors that order work, never moving what has none", () => {
    const priors = lessonPriors(rankLessons(lessons, { ...here, now: new Date(AT), top: 20 }));
    expect(priors.get("logitLens.answerProb.S2")).toBe(1);
    expect(priors.get("rollout.entropy")).toBe(-0.5);
    const analyzers = ["rollout", "pope", "logitLens", "tokenEntropy"];
    expect(orderByLessons(analyzers, (a) => a, priors)).toEqual(["logitLens", "tokenEntropy", "pope", "rollout"]);
    expect(orderByLessons(analyzers, (a) => a, new Map())).toEqual(analyzers);
  });
});

describe("parseLesson", () => {
  it("names the field that is wrong", () => {
    const lesson: Lesson = extractLessons(report, { at: AT })[0]!;
    expect(() => parseLesson({ ...lesson, kind: "maybe" }, "lessons.jsonl:4")).toThrow(
      /^lessons.jsonl:4: not a lesson: field 'kind'/,
    );
    expect(() => parseLesson({ ...lesson, at: "soon" }, "x")).toThrow(/field 'at' must be an ISO 8601 time/);
  });
});
