import { deleteDB, openDB } from "idb";
import { afterEach, describe, expect, it } from "vitest";
import type { Lesson } from "./lessons.ts";
import { LessonDb } from "./lesson-db.browser.ts";

const NAME = "evalrx-lessons-test";

function lesson(id: string, at: string): Lesson {
  return {
    id,
    kind: "supported",
    subject: "logitLens.answerProb.S2",
    text: "the answer's probability at the last layer is lower in failures — SUPPORTED",
    runId: "run-1",
    model: { key: "tiny-vlm", family: "llava" },
    dataset: { fingerprint: "abc", source: "pope.jsonl" },
    at,
  };
}

afterEach(async () => {
  await deleteDB(NAME);
});

describe("LessonDb (real IndexedDB)", () => {
  it("keeps each lesson once, survives a reopen, and reads newest first", async () => {
    const db = await LessonDb.open(NAME);
    expect(await db.append([lesson("a", "2026-11-01T00:00:00.000Z"), lesson("b", "2026-12-01T00:00:00.000Z")])).toBe(2);
    expect(await db.append([lesson("a", "2026-11-01T00:00:00.000Z")])).toBe(0);
    db.close();
    const again = await LessonDb.open(NAME);
    const { lessons, problems } = await again.read();
    expect(lessons.map((l) => l.id)).toEqual(["b", "a"]);
    expect(problems).toEqual([]);
    again.close();
  });

  it("names a stored record that is not a lesson, and returns the rest", async () => {
    const db = await LessonDb.open(NAME);
    await db.append([lesson("good", "2026-12-01T00:00:00.000Z")]);
    db.close();
    const raw = await openDB(NAME, 1);
    await raw.put("lessons", { id: "bad", at: "2026-12-02T00:00:00.000Z", kind: "guess" });
    raw.close();
    const again = await LessonDb.open(NAME);
    const { lessons, problems } = await again.read();
    expect(lessons.map((l) => l.id)).toEqual(["good"]);
    expect(problems).toEqual([expect.stringMatching(/^evalrx-lessons-test\/lessons\/bad: not a lesson: field 'kind'/)]);
    again.close();
  });
});
