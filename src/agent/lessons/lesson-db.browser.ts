import { openDB, type IDBPDatabase } from "idb";
import { parseLesson, type LessonsRead } from "./lesson-schema.ts";
import type { Lesson } from "./lessons.ts";

/** A database of its own, so lessons never need a migration of the runs' schema. */
const DB_NAME = "evalrx-lessons";
const STORE = "lessons";

/**
 * The page's lessons store: IndexedDB database `evalrx-lessons`, one record per
 * lesson keyed by its id (appending a lesson twice keeps one), with an `at`
 * index for newest-first reading.
 */
export class LessonDb {
  private constructor(
    private readonly db: IDBPDatabase,
    readonly name: string,
  ) {}

  static async open(name = DB_NAME): Promise<LessonDb> {
    const db = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore(STORE, { keyPath: "id" }).createIndex("at", "at");
      },
    });
    return new LessonDb(db, name);
  }

  /** Every stored lesson, newest first; a record that is not a lesson is named, not returned. */
  async read(): Promise<LessonsRead> {
    const lessons: Lesson[] = [];
    const problems: string[] = [];
    let cursor = await this.db.transaction(STORE).store.index("at").openCursor(null, "prev");
    while (cursor) {
      try {
        lessons.push(parseLesson(cursor.value, `${this.name}/${STORE}/${String(cursor.primaryKey)}`));
      } catch (error) {
        problems.push((error as Error).message);
      }
      cursor = await cursor.continue();
    }
    return { lessons, problems };
  }

  /** Adds the lessons whose id is not stored yet, in one transaction; returns how many were new. */
  async append(lessons: readonly Lesson[]): Promise<number> {
    const tx = this.db.transaction(STORE, "readwrite");
    let added = 0;
    for (const lesson of lessons) {
      if ((await tx.store.getKey(lesson.id)) !== undefined) continue;
      await tx.store.add(lesson);
      added++;
    }
    await tx.done;
    return added;
  }

  close(): void {
    this.db.close();
  }
}
