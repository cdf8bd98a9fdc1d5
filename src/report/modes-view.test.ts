import { describe, expect, it } from "vitest";
import { EventLog } from "../agent/events.ts";
import { runLoop } from "../agent/loop.ts";
import { plantedModes } from "../agent/modes/planted-modes.ts";
import { readLessons, recordLessons, type LessonStore } from "../agent/lessons/lessons-loop.ts";
import type { Lesson } from "../agent/lessons/lessons.ts";
import { buildReport } from "../agent/report.ts";
import { renderReportHtml } from "./html.ts";
import { lessonsSection } from "./modes-view.ts";
import { allSections, reportView, type TableView } from "./view.ts";

const sections0 = (report: ReturnType<typeof buildReport>) => [...allSections(reportView(report))];

describe("the report's Failure modes section", () => {
  it("shows each mode with its size, defining signals, hypothesis and the chosen k, in the page view and the export", async () => {
    const { table } = plantedModes({ seed: 3, cases: 600, modeSizes: [60, 60] });
    const log = new EventLog({ runId: "modes-view", now: () => Date.UTC(2026, 11, 1) });
    log.append("setup", "run.started", {
      kind: "explore",
      question: "What predicts failure?",
      seed: 1,
      alpha: 0.05,
      codeVersion: "test",
    });
    log.append("setup", "data.loaded", {
      source: "planted",
      fingerprint: "f",
      n: 600,
      labelDistribution: { fail: 120, pass: 480 },
    });
    // Lessons in a plain array store (the file and IndexedDB stores have their own tests): read, then recorded.
    const kept: Lesson[] = [];
    const lessons: LessonStore = {
      where: "memory",
      read: () => ({ lessons: [...kept], problems: [] }),
      append: (l) => (kept.push(...l), l.length),
    };
    const context = { model: { key: "planted" }, dataset: { fingerprint: "f", source: "planted" } };
    await readLessons(lessons, context, log, new Date(Date.UTC(2026, 11, 1)));
    await runLoop(table, log, {
      protocol: { question: "What predicts failure?" },
      seed: 1,
      modes: true,
      resamples: { explore: 100, sealed: 300 },
    });
    await recordLessons(lessons, buildReport(log.events), log, { at: "2026-12-01T00:00:00.000Z" });
    log.append("report", "run.finished", {});
    const report = buildReport(log.events);
    const left = sections0(report).find((s) => s.id === "lessons")!;
    const recorded = left.blocks.find((b) => b.kind === "table" && b.table.id === "lessons-recorded");
    expect(kept.length).toBeGreaterThan(0);
    expect(recorded && recorded.kind === "table" && recorded.table.rows.map((r) => r.key)).toEqual(
      kept.map((l) => l.id),
    );
    expect(report.modes!.k).toBe(2);
    const sections = [...allSections(reportView(report))];
    const modes = sections.find((s) => s.id === "modes")!;
    expect(modes.sections.map((s) => s.id)).toEqual(["mode-mode-1", "mode-mode-2"]);
    const tables = modes.blocks
      .filter((b): b is { kind: "table"; table: TableView } => b.kind === "table")
      .map((b) => b.table);
    const overview = tables.find((t) => t.id === "modes")!;
    expect(overview.rows).toHaveLength(2);
    // The id is code, kept whole: as plain text it wrapped as "mode-" / "1" in the page's narrow column.
    expect(overview.rows[0]!.cells[0]).toEqual({ kind: "text", text: "mode-1", code: true });
    const criterion = tables.find((t) => t.id === "modes-criterion")!;
    expect(criterion.rows.find((r) => r.cells.some((c) => c.kind === "badge" && c.text === "chosen"))!.key).toBe("2");
    const defining = report.modes!.modes.map((m) => m.defining[0]!.signal).sort();
    expect(defining).toEqual(["attention.imageShare", "uncertainty.entropy"]);
    for (const m of report.modes!.modes)
      expect(report.hypotheses.find((h) => h.id === m.hypothesis)!.signal).toBe(`mode=${m.id}`);
    const html = renderReportHtml(report);
    expect(html).toContain("Failure modes");
    expect(html).toContain('<code><span class="w">mode-1</span></code>');
    expect(html).toContain("How many modes: the gap statistic and the silhouette at each k");
  });

  it("keys a lesson drawn twice apart, so the page's table has unique keys (a repeat failed the report page)", () => {
    const lesson = { id: "L1", kind: "mode", subject: "logprob.answer", text: "t" };
    const section = lessonsSection({
      lessons: { used: [], recorded: 1, recordedLessons: [lesson, lesson] },
    } as unknown as Parameters<typeof lessonsSection>[0]);
    const table = section!.blocks.find((b) => b.kind === "table" && b.table.id === "lessons-recorded");
    expect(table && table.kind === "table" && table.table.rows.map((r) => r.key)).toEqual(["L1", "L1#2"]);
  });
});
