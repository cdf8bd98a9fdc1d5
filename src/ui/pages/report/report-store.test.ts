import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildReport } from "../../../agent/report.ts";
import { parseReport } from "../../../report/schema.ts";
import { runHead } from "../../../store/heads.ts";
import { FileStore } from "../../../store/files.node.ts";
import { isReportRun, loadReport, readReportFile, reportRuns, saveReport } from "./report-store.ts";

const text = readFileSync(new URL("../../../report/fixtures/cli-report-200.json", import.meta.url), "utf8");
const dirs: string[] = [];
const open = async () => {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-report-store-"));
  dirs.push(dir);
  return FileStore.open(dir);
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("reports in the store (a run of kind investigation, the report as its score)", () => {
  it("keeps an opened report.json and reads the same report back by its run id", async () => {
    const store = await open();
    const report = readReportFile(text, "report.json");
    const id = await saveReport(store, report, "report.json");
    expect(id).toBe(report.runId);
    expect(await loadReport(store, id)).toEqual(report);
    const run = (await store.getRun(id))!;
    expect(run).toMatchObject({ kind: "investigation", status: "finished", config: { imported: true } });
    expect(reportRuns([runHead(run)]).map((r) => r.id)).toEqual([id]);
    // Opening it again replaces the stored copy, and leaves one run.
    expect(await saveReport(store, report, "again.json")).toBe(id);
    expect(await store.listRuns()).toHaveLength(1);
  });

  it("does not take over a run of another kind with the same id, and never marks an unfinished report running", async () => {
    const store = await open();
    const report = { ...parseReport(text), complete: false, finishedAt: null };
    await store.createRun({
      id: report.runId,
      kind: "eval",
      dataset: "d",
      model: "m",
      fingerprint: "f",
      status: "finished",
      startedAt: report.createdAt,
      config: {},
    });
    const id = await saveReport(store, report, "report.json");
    expect(id).toBe(`${report.runId}-report`);
    expect((await store.getRun(id))!.status).toBe("cancelled");
    expect(isReportRun((await store.getRun(report.runId))!)).toBe(false);
    expect(await loadReport(store, report.runId)).toBeUndefined();
  });

  it("folds the report of a run that has an event log but no stored report, as the CLI does", async () => {
    const store = await open();
    const report = parseReport(text);
    // A log as the page's investigation would store it: the report's own facts as events.
    await store.createRun({
      id: "inv-page",
      kind: "investigation",
      dataset: "pope",
      model: "tiny-vlm",
      fingerprint: "f",
      status: "finished",
      startedAt: report.createdAt,
      config: {},
    });
    await store.appendEvents("inv-page", [
      {
        stage: "setup",
        schema: 1,
        type: "run.started",
        payload: { kind: "investigate", question: "q?", seed: 1, alpha: 0.05, codeVersion: "x" },
      },
      {
        stage: "setup",
        schema: 1,
        type: "data.loaded",
        payload: { source: "pope.jsonl", fingerprint: "f", n: 0, labelDistribution: { fail: 0, pass: 0 } },
      },
    ]);
    const folded = await loadReport(store, "inv-page");
    expect(folded).toEqual(buildReport((await store.events("inv-page")) as never));
    expect(folded).toMatchObject({ question: "q?", complete: false });
    expect(await loadReport(store, "nope")).toBeUndefined();
  });

  it("names the file when its text is not a report", () => {
    expect(() => readReportFile("{nope", "mine.json")).toThrow(/^mine\.json: report: not JSON/);
    expect(() => readReportFile(JSON.stringify({ format: "evalrx-report", version: 9 }), "old.json")).toThrow(
      /^old\.json: report: version 9 is not one this EvalRx reads/,
    );
  });
});
