import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { parseLineageRecord, type LineageRead, type LineageRecord, type LineageStore } from "./record.ts";

/**
 * The CLI's lineage store: one promoted model per line of a JSONL file
 * (`.evalrx/lineage.jsonl` by default), appended durably (fsync), read back
 * line by line so one bad line costs only itself.
 */
export class LineageFile implements LineageStore {
  constructor(readonly path: string) {}

  async read(): Promise<LineageRead> {
    if (!existsSync(this.path)) return { records: [], problems: [] };
    const records: LineageRecord[] = [];
    const problems: string[] = [];
    readFileSync(this.path, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        const where = `${this.path}:${i + 1}`;
        try {
          records.push(parseLineageRecord(JSON.parse(line), where));
        } catch (error) {
          problems.push(
            error instanceof SyntaxError
              ? `${where}: not JSON (${error.message}); a torn last line from a crash looks like this`
              : (error as Error).message,
          );
        }
      });
    return { records, problems };
  }

  async add(record: LineageRecord): Promise<void> {
    const checked = parseLineageRecord(record, `promoted model '${record.id}'`);
    if ((await this.read()).records.some((r) => r.id === checked.id))
      throw new Error(`${this.path}: a promoted model '${checked.id}' exists already; promote under another name`);
    mkdirSync(dirname(this.path), { recursive: true });
    const fd = openSync(this.path, "a");
    try {
      writeSync(fd, JSON.stringify(checked) + "\n");
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}
