import { metricValue, type CaseView, type RunView } from "./run-view.ts";

/** A case's verdict over its trials, as a table shows it. */
export type CaseVerdict = "pass" | "fail" | "flaky" | "error" | "pending";

/** One row of a run's case table: small, so 100k of them cross a worker boundary cheaply. */
export interface CaseRow {
  readonly id: string;
  /** Position in the run's plan. */
  readonly position: number;
  readonly verdict: CaseVerdict;
  readonly trials: number;
  readonly passed: number;
  readonly errored: number;
  /** Per metric: the share of counted trials that passed (undefined when none counted). */
  readonly metrics: Readonly<Record<string, number | undefined>>;
  /** The first trial's answer, cut to 200 characters (the case view shows it whole). */
  readonly output: string;
  readonly split?: string;
  readonly tags: readonly string[];
  readonly latencyMs?: number;
}

/**
 * What does a case's row say? Pending before any trial; error when no trial
 * has a verdict; flaky when its trials disagree; else pass or fail.
 *
 * @example caseRow(view.cases.get("pope-0001")!, 0, ["pass", "yesNo"]).verdict // "flaky" for 2 of 3 trials passing
 */
export function caseRow(c: CaseView, position: number, metrics: readonly string[]): CaseRow {
  let passed = 0;
  let errored = 0;
  let latency = 0;
  for (const t of c.trials) {
    if (t.errored) errored++;
    else if (t.passed) passed++;
    latency += t.latencyMs;
  }
  const counted = c.trials.length - errored;
  const verdict: CaseVerdict =
    c.trials.length === 0
      ? "pending"
      : counted === 0
        ? "error"
        : passed === counted
          ? "pass"
          : passed === 0
            ? "fail"
            : "flaky";
  const output = c.trials[0]?.output ?? "";
  return {
    id: c.id,
    position,
    verdict,
    trials: c.trials.length,
    passed,
    errored,
    metrics: Object.fromEntries(metrics.map((m) => [m, metricValue(c, m)])),
    output: output.length > 200 ? `${output.slice(0, 199)}…` : output,
    ...(c.split !== undefined ? { split: c.split } : {}),
    tags: c.tags,
    ...(c.trials.length ? { latencyMs: latency / c.trials.length } : {}),
  };
}

/** Which rows a table shows, in which order. */
export interface CaseQuery {
  /** Only rows with this verdict ("all" or absent: every row). */
  readonly verdict?: CaseVerdict | "all";
  /** Rows whose id, answer, split or a tag contains this text (case-insensitive). */
  readonly search?: string;
  /** Plan order (default), id, verdict (failures first), or latency. */
  readonly sort?: "position" | "id" | "verdict" | "latency";
  readonly descending?: boolean;
}

const verdictOrder: Record<CaseVerdict, number> = { error: 0, fail: 1, flaky: 2, pending: 3, pass: 4 };

/**
 * Filters and sorts case rows (a pure function, so a worker can answer for
 * 100k rows and send back one page).
 *
 * @example queryRows(rows, { verdict: "fail", sort: "id" }).map((r) => r.id) // the failing cases by id
 */
export function queryRows(rows: readonly CaseRow[], query: CaseQuery = {}): CaseRow[] {
  const needle = query.search?.trim().toLowerCase();
  let out = rows.filter(
    (r) =>
      (!query.verdict || query.verdict === "all" || r.verdict === query.verdict) &&
      (!needle ||
        r.id.toLowerCase().includes(needle) ||
        r.output.toLowerCase().includes(needle) ||
        (r.split ?? "").toLowerCase().includes(needle) ||
        r.tags.some((t) => t.toLowerCase().includes(needle))),
  );
  const sort = query.sort ?? "position";
  if (sort !== "position" || query.descending) {
    const key: (r: CaseRow) => number | string =
      sort === "id"
        ? (r) => r.id
        : sort === "verdict"
          ? (r) => verdictOrder[r.verdict]
          : sort === "latency"
            ? (r) => r.latencyMs ?? -1
            : (r) => r.position;
    const sign = query.descending ? -1 : 1;
    out = out.sort((a, b) => {
      const x = key(a);
      const y = key(b);
      return (x < y ? -1 : x > y ? 1 : a.position - b.position) * sign;
    });
  }
  return out;
}

/** Rows of every case of a run, in plan order. */
export function caseRows(view: RunView): CaseRow[] {
  const rows: CaseRow[] = [];
  let position = 0;
  for (const c of view.cases.values()) rows.push(caseRow(c, position++, view.metrics));
  return rows;
}

/** How many rows have each verdict. */
export function verdictCounts(rows: readonly CaseRow[]): Record<CaseVerdict, number> {
  const counts: Record<CaseVerdict, number> = { pass: 0, fail: 0, flaky: 0, error: 0, pending: 0 };
  for (const r of rows) counts[r.verdict]++;
  return counts;
}
