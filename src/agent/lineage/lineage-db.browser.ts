import { openDB, type IDBPDatabase } from "idb";
import { parseLineageRecord, type LineageRead, type LineageRecord, type LineageStore } from "./record.ts";

/** A database of its own, as the lessons have, so promotions never need a migration of the runs' schema. */
const DB_NAME = "evalrx-lineage";
const STORE = "models";

/**
 * The page's lineage store: IndexedDB database `evalrx-lineage`, one record
 * per promoted model keyed by its id, with a `promotedAt` index for reading
 * in promotion order.
 */
export class LineageDb implements LineageStore {
  private constructor(
    private readonly db: IDBPDatabase,
    readonly name: string,
  ) {}

  static async open(name = DB_NAME): Promise<LineageDb> {
    const db = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore(STORE, { keyPath: "id" }).createIndex("promotedAt", "promotedAt");
      },
    });
    return new LineageDb(db, name);
  }

  async read(): Promise<LineageRead> {
    const records: LineageRecord[] = [];
    const problems: string[] = [];
    let cursor = await this.db.transaction(STORE).store.index("promotedAt").openCursor();
    while (cursor) {
      try {
        records.push(parseLineageRecord(cursor.value, `${this.name}/${STORE}/${String(cursor.primaryKey)}`));
      } catch (error) {
        problems.push((error as Error).message);
      }
      cursor = await cursor.continue();
    }
    return { records, problems };
  }

  async add(record: LineageRecord): Promise<void> {
    const checked = parseLineageRecord(record, `promoted model '${record.id}'`);
    const tx = this.db.transaction(STORE, "readwrite");
    if ((await tx.store.getKey(checked.id)) !== undefined) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw new Error(`${this.name}: a promoted model '${checked.id}' exists already; promote under another name`);
    }
    await tx.store.add(checked);
    await tx.done;
  }

  close(): void {
    this.db.close();
  }
}
