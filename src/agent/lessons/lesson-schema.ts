import * as v from "valibot";
import type { Lesson } from "./lessons.ts";

/** What a lessons store holds: the lessons, and the records that are not lessons, each named. */
export interface LessonsRead {
  readonly lessons: Lesson[];
  /** `where: what is wrong` for each bad line or record; the lessons around it are kept. */
  readonly problems: string[];
}

const short = v.pipe(v.string(), v.minLength(1), v.maxLength(2_000));

const LessonSchema = v.object({
  id: short,
  kind: v.picklist(["refuted", "inconclusive", "supported", "repair-failed", "mode", "recurring-mode", "unresolved"]),
  subject: short,
  text: v.pipe(v.string(), v.maxLength(20_000)),
  runId: short,
  model: v.object({ key: short, family: v.optional(short) }),
  dataset: v.object({ fingerprint: short, source: v.pipe(v.string(), v.maxLength(2_000)) }),
  at: v.pipe(v.string(), v.isoTimestamp("must be an ISO 8601 time such as 2026-12-01T12:00:00.000Z")),
});

/**
 * Is this value a lesson? The lesson, or an error that names `where` (a file
 * and line, or a record key) and the first field that is wrong.
 *
 * @example parseLesson(JSON.parse(line), "lessons.jsonl:3")
 */
export function parseLesson(value: unknown, where: string): Lesson {
  const result = v.safeParse(LessonSchema, value);
  if (result.success) return result.output;
  const issue = result.issues[0]!;
  const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
  throw new RangeError(`${where}: not a lesson: ${path ? `field '${path}' ` : ""}${issue.message}`);
}
