import { buildReport } from "../../../agent/report.ts";
import type { RunEvent } from "../../../agent/events.ts";
import { parseReport, validateReport, type Report } from "../../../report/schema.ts";
import type { RunHead } from "../../../store/heads.ts";
import type { RunRecord, Store } from "../../../store/types.ts";

/**
 * Where reports live in the page's store, with nothing added to the `Store`
 * interface: a report is a run of kind `investigation` (or `explore`) whose
 * score named `report` holds the report's JSON in its `detail`. A run that
 * has no such score but has an event log (an investigation run in the page)
 * has its report folded from the log, as the CLI does.
 */

/** The score that holds a stored report. */
export const REPORT_SCORE = "report";

/** The run kinds a report can belong to. */
export const REPORT_KINDS: readonly string[] = ["investigation", "explore"];

/**
 * Is this run one whose report the report page can show?
 *
 * @example isReportRun({ kind: "investigation", … }) // true
 */
export function isReportRun(run: Pick<RunRecord, "kind">): boolean {
  return REPORT_KINDS.includes(run.kind);
}

/**
 * The stored runs that hold a report, newest first (the list is already newest first).
 *
 * @example reportRuns(store.runs).map((r) => r.id) // ["investigate-0c62da0605d0-s1-20261201T101500", …]
 */
export function reportRuns(runs: readonly RunHead[]): RunHead[] {
  return runs.filter(isReportRun);
}

/** How the page names the kind of report a file holds. */
const runKind = (report: Report) => (report.kind === "explore" ? "explore" : "investigation");

/**
 * Keeps an opened report in the store and returns the run id that reopens it
 * (`#/report/<id>`): the report's own run id, or, when that id belongs to a
 * run of another kind (an eval), `<id>-report`. Opening the same report
 * again replaces its stored copy; nothing else is touched.
 *
 * @example await saveReport(store, report, "report.json") // "investigate-0c62da0605d0-s1-20261201T101500"
 */
export async function saveReport(store: Store, report: Report, source: string): Promise<string> {
  let id = report.runId;
  let existing = await store.getRun(id);
  if (existing && !isReportRun(existing)) {
    id = `${report.runId}-report`;
    existing = await store.getRun(id);
    if (existing && !isReportRun(existing))
      throw new Error(`a run '${id}' of kind ${existing.kind} is already stored; delete it to open this report`);
  }
  const verdicts: Record<string, number> = {};
  for (const h of report.hypotheses) verdicts[h.verdict] = (verdicts[h.verdict] ?? 0) + 1;
  const model = report.provenance.model?.["key"];
  if (!existing)
    await store.createRun({
      id,
      kind: runKind(report),
      dataset: report.provenance.data.source || "—",
      model: typeof model === "string" ? model : "—",
      fingerprint: report.provenance.data.fingerprint || "—",
      // An incomplete report stopped: never "running", which would offer to resume what this page did not start.
      status: report.complete ? "finished" : "cancelled",
      startedAt: report.createdAt,
      ...(report.finishedAt ? { finishedAt: report.finishedAt } : {}),
      config: { imported: true, source, question: report.question, reportKind: report.kind },
    });
  await store.updateRun(id, {
    summary: { hypotheses: report.hypotheses.length, verdicts, fixedBy: report.repairs?.fixedBy ?? null },
  });
  await store.putScores([{ runId: id, name: REPORT_SCORE, value: report.version, detail: report }]);
  return id;
}

/**
 * The report of a stored run: its stored copy (checked against the schema
 * again, as anything read back is), or the one its event log folds into;
 * undefined when the run does not exist or holds neither.
 *
 * @example await loadReport(store, "investigate-0c62da0605d0-s1-20261201T101500") // the Report, or undefined
 */
export async function loadReport(store: Store, id: string): Promise<Report | undefined> {
  const run = await store.getRun(id);
  if (!run) return undefined;
  const score = (await store.scores(id)).find((s) => s.name === REPORT_SCORE);
  if (score) return validateReport(score.detail);
  const events = await store.events(id);
  if (!events.some((e) => e.type === "run.started")) return undefined;
  return buildReport(events as unknown as RunEvent[]);
}

/**
 * Reads a `report.json` file's text as the CLI wrote it, naming the file in any error.
 *
 * @example readReportFile(await file.text(), "report.json") // a Report, or throws "report.json: report: not JSON (…)"
 */
export function readReportFile(text: string, name: string): Report {
  try {
    return parseReport(text);
  } catch (error) {
    throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
