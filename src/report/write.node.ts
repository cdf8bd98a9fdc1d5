/** Writes a run's outputs to a folder: `report.json`, `events.jsonl` and the self-contained `report.html`. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderReportHtml } from "./html.ts";
import type { Report } from "./schema.ts";

/**
 * Writes the report files into `dir` (created when missing) and returns their paths.
 * Example: `writeReportFiles("out", report, events)` → `{ json: "out/report.json", … }`.
 */
export function writeReportFiles(
  dir: string,
  report: Report,
  events?: readonly unknown[],
): { json: string; html: string; events?: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, "report.json");
  const html = join(dir, "report.html");
  writeFileSync(json, JSON.stringify(report, null, 2) + "\n");
  writeFileSync(html, renderReportHtml(report));
  if (!events) return { json, html };
  const path = join(dir, "events.jsonl");
  writeFileSync(path, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  return { json, html, events: path };
}
