/**
 * `explore`: M2–M4 over an eval log with no model. Imported cases in, a report
 * and its event log out.
 */
import { canonicalJson, sha256Hex, type ImportedCase } from "../datasets/index.ts";
import type { Report } from "../report/schema.ts";
import { casesToTable } from "./cases-table.ts";
import type { Calibrator } from "./evalue.ts";
import { EventLog, type RunEvent } from "./events.ts";
import { excludeColumns } from "./exclusions.ts";
import type { Judge } from "./judge.ts";
import type { ScreenRule } from "./explore.ts";
import { runLoop, type LoopResult } from "./loop.ts";
import { buildReport } from "./report.ts";
import type { CaseTable } from "./signals.ts";

export interface ExploreRunOptions {
  readonly question?: string;
  readonly holdout?: number;
  /** M2's screen (default p ≤ 0.05, at most 5 signals): which exploration signals become hypotheses. */
  readonly screen?: Partial<ScreenRule>;
  readonly seed?: number;
  readonly alpha?: number;
  readonly judge?: Judge;
  /** Where the cases came from (a file name), for provenance. */
  readonly source?: string;
  readonly labelColumn?: string | null;
  /**
   * Columns that are the label or derived from it (the importer's
   * `LabelSource.derived`: a scorer's value and answer, a metric's siblings):
   * never tested as signals, each said in the report's problems.
   */
  readonly derived?: readonly string[];
  /** Test only these columns. */
  readonly signals?: readonly string[];
  /** Every column of the file, for messages. */
  readonly columns?: readonly string[];
  readonly codeVersion?: string;
  readonly runId?: string;
  readonly now?: () => number;
  readonly sink?: (event: RunEvent) => void;
  readonly resamples?: { readonly explore?: number; readonly sealed?: number };
  /** How p-values become e-values (default: the mixture calibrator; the bench compares others). */
  readonly calibrator?: Calibrator;
  /** Called with the table before the loop: lets a test watch which rows are read. */
  readonly inspectTable?: (table: CaseTable) => CaseTable;
}

/** The question `explore` answers when the user asks none: it names no factor, so any predictive signal answers it. */
export const DEFAULT_QUESTION = "What predicts the failures?";

/**
 * 12 hex characters of SHA-256 over every case's id, label, cluster, split and
 * meta (sorted by id): unlike the dataset version, an eval log's fingerprint
 * must change when a label or a signal value does.
 */
export function logFingerprint(cases: readonly ImportedCase[]): string {
  const rows = [...cases]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((c) => canonicalJson({ id: c.id, label: c.label, cluster: c.cluster, split: c.split, meta: c.meta }));
  return sha256Hex(rows.join("\n")).slice(0, 12);
}

/**
 * Which columns of this eval log predict failure, decided on sealed cases?
 * Throws (with how to mend it) when the file has no label; otherwise always
 * returns a report, which lists whatever could not be tested and why. The
 * label in another form is never a signal: the columns the importer derived
 * from it, and any column that separates pass from fail perfectly on the
 * exploration split, are left out and named in the report's problems.
 *
 * Example: `const { report } = await exploreCases(cases, { source: "log.csv", seed: 1 })`
 * → `report.hypotheses[0]` = `{ signal: "retrieval_hits", verdict: "SUPPORTED", … }`.
 */
export async function exploreCases(
  cases: readonly ImportedCase[],
  options: ExploreRunOptions = {},
): Promise<{ report: Report; events: readonly RunEvent[]; result: LoopResult }> {
  const seed = options.seed ?? 1;
  const alpha = options.alpha ?? 0.05;
  const question = options.question ?? DEFAULT_QUESTION;
  const { table: built, label } = casesToTable(cases, {
    labelColumn: options.labelColumn,
    signals: options.signals,
    columns: options.columns,
  });
  const excluded = excludeColumns(built, {
    derived: options.derived,
    labelColumn: label.column,
    holdout: options.holdout ?? 0.4,
    seed,
  });
  const table = options.inspectTable ? options.inspectTable(excluded.table) : excluded.table;
  const fingerprint = logFingerprint(cases);
  const log = new EventLog({
    runId: options.runId ?? `explore-${fingerprint}-s${seed}`,
    now: options.now,
    sink: options.sink,
  });
  log.append("setup", "run.started", {
    kind: "explore",
    question,
    seed,
    alpha,
    holdout: options.holdout ?? 0.4,
    codeVersion: options.codeVersion ?? "unknown",
    judge: options.judge ? (options.judge.id ?? "configured") : "rules",
  });
  const fail = built.failed.filter(Boolean).length;
  log.append("setup", "data.loaded", {
    source: options.source ?? "(cases)",
    fingerprint,
    n: built.ids.length,
    labelColumn: label.column,
    labelMeaning: `label true = ${label.trueMeans}`,
    unlabeled: label.unlabeled,
    labelDistribution: { fail, pass: built.ids.length - fail },
    columns: [...built.columns.keys()],
  });
  if (label.unlabeled)
    log.append("setup", "problem", {
      what: "label",
      why: `${label.unlabeled} case(s) have no label and were left out`,
    });
  if (fail === 0 || fail === built.ids.length)
    log.append("setup", "problem", {
      what: "label",
      why:
        fail === 0
          ? `the label has one class only: all ${built.ids.length} cases pass, so there is no failure to explain`
          : `the label has one class only: all ${built.ids.length} cases fail, so nothing distinguishes failures`,
    });
  for (const note of excluded.notes) log.append("setup", "problem", { what: note.what, why: note.why });
  const result = await runLoop(table, log, {
    protocol: { question },
    holdout: options.holdout,
    ...(options.screen ? { screen: options.screen } : {}),
    seed,
    alpha,
    judge: options.judge,
    resamples: options.resamples,
    ...(options.calibrator ? { calibrator: options.calibrator } : {}),
  });
  log.append("report", "run.finished", {
    verdicts: result.verified.map((v) => ({ id: v.id, verdict: v.verdict })),
  });
  return { report: buildReport(log.events), events: log.events, result };
}
