/**
 * What the share page shows, as plain data: the title of a share, the notes
 * on what its link left out, a run's metric rows, and a safe file name for
 * its bundle. Everything here is text the page renders as text.
 */
import { OMISSIONS, type SharePayload, type SharedRunSummary } from "../../../share/index.ts";

/**
 * The heading of a share: the report's question, or the run's id.
 *
 * @example shareTitle({ kind: "run", run: { id: "pope-1", … }, … }) // "Run pope-1"
 */
export function shareTitle(share: SharePayload): string {
  return share.kind === "report" ? `Report ${share.report.runId}` : `Run ${share.run.id}`;
}

/**
 * One sentence per part the link left out to fit, saying where the rest is.
 *
 * @example omissionNotes({ omitted: ["evidence"], … }) // ["This link leaves out the evidence cases (…); the bundle file has them."]
 */
export function omissionNotes(share: SharePayload): string[] {
  return share.omitted.map(
    (o) => `This link leaves out ${OMISSIONS[o]} to fit in a URL; ask the sender for the bundle file, which has them.`,
  );
}

/** A metric of a shared run, as its row shows it. */
export interface MetricRow {
  readonly name: string;
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
  readonly method: string;
  readonly trials: number;
  readonly errored: number;
}

/**
 * The pass rate first, then each evaluator's metric, with non-numbers as NaN
 * (so the formatters print "—").
 *
 * @example metricRows(summary)[0] // { name: "pass", mean: 0.7, lo: 0.58, hi: 0.8, n: 40, … }
 */
export function metricRows(summary: SharedRunSummary | undefined): MetricRow[] {
  if (!summary) return [];
  const n = (x: number | null | undefined) => (typeof x === "number" ? x : NaN);
  return [summary.pass, ...Object.values(summary.metrics)].flatMap((m) =>
    m
      ? [
          {
            name: m.name,
            mean: n(m.mean),
            lo: n(m.lo),
            hi: n(m.hi),
            n: m.n,
            method: m.method,
            trials: m.trials,
            errored: m.errored,
          },
        ]
      : [],
  );
}

/**
 * A file name for a share's bundle that any file system takes: the id's
 * letters, digits, dots and dashes (others become `_`), at most 80 of them.
 *
 * @example bundleName({ kind: "run", run: { id: "pope/1 <x>" }, … }) // "pope_1_x_.evalrx.zip"
 */
export function bundleName(share: SharePayload): string {
  return `${safeFileStem(share)}.evalrx.zip`;
}

/**
 * The file name of a shared report's HTML export: its run id, made safe as `bundleName` does.
 *
 * @example reportHtmlName({ kind: "report", report: { runId: "investigate/1 <x>" }, … }) // "investigate_1_x_.html"
 */
export function reportHtmlName(share: SharePayload): string {
  return `${safeFileStem(share)}.html`;
}

/** The shared run's or report's id as a file name: no path separators, markup or leading dots; 80 characters. */
function safeFileStem(share: SharePayload): string {
  const id = share.kind === "report" ? share.report.runId : share.run.id;
  return (
    id
      .replace(/[^\w.-]+/g, "_")
      .replace(/^[._]+/, "")
      .slice(0, 80) || "shared"
  );
}
