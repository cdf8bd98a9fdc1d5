import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { parseLesson, type LessonsRead } from "./lesson-schema.ts";
import type { Lesson } from "./lessons.ts";

/**
 * The lessons store of the Node CLI: one JSON lesson per line in a file beside
 * the store (`.evalrx/lessons.jsonl` by default), appended durably (fsync) so
 * a crash loses at most the line being written, and read back line by line so
 * one bad line costs only itself.
 */
export class LessonFile {
  constructor(readonly path: string) {}

  read(): LessonsRead {
    if (!existsSync(this.path)) return { lessons: [], problems: [] };
    const lessons: Lesson[] = [];
    const problems: string[] = [];
    const lines = readFileSync(this.path, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      const where = `${this.path}:${i + 1}`;
      try {
        lessons.push(parseLesson(JSON.parse(line), where));
      } catch (error) {
        problems.push(
          error instanceof SyntaxError
            ? `${where}: not JSON (${error.message}); a torn last line from a crash looks like this`
            : (error as Error).message,
        );
      }
    });
    return { lessons, problems };
  }

  /** Appends the lessons whose id is not in the file yet; returns how many were new. */
  append(lessons: readonly Lesson[]): number {
    const known = new Set(this.read().lessons.map((l) => l.id));
    const fresh: Lesson[] = [];
    for (const lesson of lessons) {
      if (known.has(lesson.id)) continue;
      known.add(lesson.id);
      fresh.push(lesson);
    }
    if (fresh.length === 0) return 0;
    mkdirSync(dirname(this.path), { recursive: true });
    const fd = openSync(this.path, "a");
    try {
      writeSync(fd, fresh.map((l) => JSON.stringify(l) + "\n").join(""));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return fresh.length;
  }
}
