/** Writes a run's outputs to a folder: `report.json`, `events.jsonl` and the self-contained `report.html`. */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { renderReportHtml } from "./html.ts";
import { neutralizeBidi } from "./safe-text.ts";
import type { Report } from "./schema.ts";

/**
 * Writes `body` to `path` so that a reader (or a process killed at any
 * moment, or a full disk) sees either the old file or the whole new one:
 * a temp file beside it is written, flushed to disk, and renamed over the
 * target, and the folder is flushed so the rename survives a power cut.
 * A failure names the file and removes the temp file.
 *
 * @example writeFileAtomic("out/report.json", JSON.stringify(report))
 */
export function writeFileAtomic(path: string, body: string | Uint8Array): void {
  const temp = join(dirname(path), `.${randomBytes(6).toString("hex")}.${path.split(/[\\/]/).pop()}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temp, "wx");
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw writeError(error, path);
  }
  syncFolder(dirname(path));
}

/** Flushes a folder's entries (a rename into it) to disk; a platform that cannot is left as it is. */
export function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Windows cannot open a directory; its renames are as durable as the platform makes them.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A write failure as one line naming the file: a full disk says so, anything else gives the system's reason. */
export function writeError(error: unknown, path: string): Error {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "ENOSPC" || code === "EDQUOT")
    return new Error(`the disk is full writing ${path}; the file was left as it was. Free space and run again.`, {
      cause: error,
    });
  const reason = error instanceof Error ? error.message.replace(/^[A-Z]+: /, "") : String(error);
  return new Error(`cannot write ${path}: ${reason}`, { cause: error });
}

/**
 * Writes the report files into `dir` (created when missing), each one
 * atomically (see {@link writeFileAtomic}), and returns their paths. Bidi
 * controls in any text of the report are made visible first, so a crafted
 * case id or column name cannot reorder what a reader sees.
 * Example: `writeReportFiles("out", report, events)` → `{ json: "out/report.json", … }`.
 */
export function writeReportFiles(
  dir: string,
  report: Report,
  events?: readonly unknown[],
): { json: string; html: string; events?: string } {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw writeError(error, dir);
  }
  const safe = neutralizeBidi(report);
  const json = join(dir, "report.json");
  const html = join(dir, "report.html");
  writeFileAtomic(json, JSON.stringify(safe, null, 2) + "\n");
  writeFileAtomic(html, renderReportHtml(safe));
  if (!events) return { json, html };
  const path = join(dir, "events.jsonl");
  writeFileAtomic(path, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  return { json, html, events: path };
}
