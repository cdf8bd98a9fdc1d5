import type { CaseTablePage } from "../../../../workers/run-tables.ts";

/**
 * Do two pages of one run's case table say the same about the whole table (the counts, the summary, the rows
 * matched: what the page shows above the rows)? Each page the worker answers repeats those facts; a page
 * scrolled to that repeats them unchanged need not replace the table the summary, its figure and the filter
 * counts are drawn from (on a fast scroll of a 100k-case run, a new page arrives every other frame).
 *
 * @example sameFacts(page0, page7) // true: same run, same query, nothing judged between them
 * @example sameFacts(page0, afterMoreJudged) // false: `judged` moved on
 */
export function sameFacts(a: CaseTablePage | undefined, b: CaseTablePage): boolean {
  if (a === undefined) return false;
  const counts = (p: CaseTablePage) => Object.entries(p.counts).join(";");
  return (
    a.total === b.total &&
    a.matched === b.matched &&
    a.judged === b.judged &&
    a.partial === b.partial &&
    a.metrics.join("\u0000") === b.metrics.join("\u0000") &&
    counts(a) === counts(b) &&
    a.summary?.status === b.summary?.status &&
    a.summary?.trials === b.summary?.trials
  );
}
