import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Lesson } from "./lessons.ts";
import { LessonFile } from "./lesson-file.node.ts";

const dir = mkdtempSync(join(tmpdir(), "evalrx-lessons-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function lesson(id: string, at = "2026-12-01T12:00:00.000Z"): Lesson {
  return {
    id,
    kind: "refuted",
    subject: "rollout.entropy",
    text: "rollout entropy is higher in failures — REFUTED",
    runId: "run-1",
    model: { key: "tiny-vlm" },
    dataset: { fingerprint: "abc", source: "pope.jsonl" },
    at,
  };
}

describe("LessonFile", () => {
  it("appends lessons durably, once each, and reads them back", () => {
    const file = new LessonFile(join(dir, "a", "lessons.jsonl"));
    expect(file.read()).toEqual({ lessons: [], problems: [] });
    expect(file.append([lesson("1"), lesson("2"), lesson("1")])).toBe(2);
    expect(file.append([lesson("2"), lesson("3")])).toBe(1);
    expect(file.read().lessons.map((l) => l.id)).toEqual(["1", "2", "3"]);
    expect(readFileSync(file.path, "utf8").split("\n")).toHaveLength(4);
  });

  it("names each bad line and keeps the lessons around it, a torn last line included", () => {
    const file = new LessonFile(join(dir, "b.jsonl"));
    file.append([lesson("1")]);
    appendFileSync(file.path, JSON.stringify({ ...lesson("2"), kind: "guess" }) + "\n");
    file.append([lesson("3")]);
    appendFileSync(file.path, '{"id":"4","kind":"ref');
    const { lessons, problems } = file.read();
    expect(lessons.map((l) => l.id)).toEqual(["1", "3"]);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/b\.jsonl:2: not a lesson: field 'kind'/);
    expect(problems[1]).toMatch(/b\.jsonl:4: not JSON .*a torn last line/);
  });
});
