/**
 * A run's case table, answered off the main thread: the worker reads the
 * run and its items from IndexedDB once, keeps the rows, and sends the page
 * only the page of rows it shows (filtered and sorted here), so a
 * 100k-case run scrolls without the main thread ever holding it.
 */
import {
  caseRows,
  queryRows,
  verdictCounts,
  type CaseQuery,
  type CaseRow,
  type CaseVerdict,
} from "../src/evals/case-rows.ts";
import { runView, type RunView, type TrialView } from "../src/evals/run-view.ts";
import { summarize, type EvalSummary } from "../src/evals/summary.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import type { StoredCase } from "../src/store/types.ts";

/** One page of a run's case table. */
export interface CaseTablePage {
  /** Cases the run planned. */
  readonly total: number;
  /** Cases the query matched. */
  readonly matched: number;
  readonly counts: Readonly<Record<CaseVerdict, number>>;
  readonly metrics: readonly string[];
  readonly offset: number;
  readonly rows: readonly CaseRow[];
  /** Items judged when the table was read (the page re-asks when progress moves on). */
  readonly judged: number;
  /** The run's summary as of `judged` items (the stored one once the run is finished). */
  readonly summary: EvalSummary | undefined;
}

/** One case of a run, whole: every trial with every check, and the dataset's case when it is still stored. */
export interface RunCaseDetail {
  readonly id: string;
  readonly position: number;
  readonly split?: string;
  readonly tags: readonly string[];
  readonly cluster?: string;
  readonly trials: readonly TrialView[];
  readonly stored?: StoredCase;
  /** True when the stored case differs from the one the run judged (its hash changed). */
  readonly changed: boolean;
}

interface Loaded {
  readonly view: RunView;
  readonly rows: CaseRow[];
  readonly judged: number;
  readonly status: string;
  readonly summary: EvalSummary | undefined;
  readonly query: string;
  readonly matchedRows: CaseRow[];
}

const stores = new Map<string, Promise<IdbStore>>();
const loaded = new Map<string, Loaded>();

function storeOf(db: string): Promise<IdbStore> {
  let s = stores.get(db);
  if (!s) {
    s = IdbStore.open(db);
    stores.set(db, s);
  }
  return s;
}

async function load(db: string, runId: string): Promise<Loaded> {
  const store = await storeOf(db);
  const key = `${db}\u0000${runId}`;
  const [progress, head] = await Promise.all([
    store.progress(runId),
    store.runHeads().then((h) => h.find((r) => r.id === runId)),
  ]);
  if (!head) throw new Error(`no run '${runId}' in this browser's store (it may have been deleted)`);
  const judged = progress?.done ?? 0;
  const cached = loaded.get(key);
  if (cached && cached.judged === judged && cached.status === head.status) return cached;
  const [run, items] = await Promise.all([store.getRun(runId), store.items(runId)]);
  if (!run) throw new Error(`no run '${runId}' in this browser's store (it may have been deleted)`);
  const view = runView(run, items);
  const rows = caseRows(view);
  const summary = run.status === "finished" && run.summary ? (run.summary as unknown as EvalSummary) : summarize(view);
  const entry: Loaded = { view, rows, judged, status: run.status, summary, query: "", matchedRows: rows };
  // Keep the last two runs read: a comparison flips between two.
  loaded.delete(key);
  loaded.set(key, entry);
  for (const k of [...loaded.keys()].slice(0, -2)) loaded.delete(k);
  return entry;
}

/**
 * One page of run `runId`'s case table: `limit` rows from `offset` of the
 * rows matching `query`, with the counts and the summary.
 *
 * @example await stats.caseTable("evalrx", runId, { verdict: "fail" }, 0, 100)
 */
export async function caseTable(
  db: string,
  runId: string,
  query: CaseQuery,
  offset: number,
  limit: number,
): Promise<CaseTablePage> {
  const entry = await load(db, runId);
  const q = JSON.stringify(query);
  const matched = entry.query === q ? entry.matchedRows : queryRows(entry.rows, query);
  loaded.set(`${db}\u0000${runId}`, { ...entry, query: q, matchedRows: matched });
  return {
    total: entry.rows.length,
    matched: matched.length,
    counts: verdictCounts(entry.rows),
    metrics: entry.view.metrics,
    offset,
    rows: matched.slice(offset, offset + limit),
    judged: entry.judged,
    summary: entry.summary,
  };
}

/** Every trial of one case of a run, and the case as the dataset stores it. */
export async function runCase(db: string, runId: string, caseId: string): Promise<RunCaseDetail> {
  const entry = await load(db, runId);
  const c = entry.view.cases.get(caseId);
  if (!c) throw new Error(`run '${runId}' has no case '${caseId}'`);
  const store = await storeOf(db);
  const run = await store.runHeads().then((h) => h.find((r) => r.id === runId));
  const stored = run ? await store.getCase(run.dataset, caseId) : undefined;
  return {
    id: c.id,
    position: entry.rows.findIndex((r) => r.id === caseId),
    ...(c.split !== undefined ? { split: c.split } : {}),
    tags: c.tags,
    ...(c.cluster !== undefined ? { cluster: c.cluster } : {}),
    trials: c.trials,
    ...(stored ? { stored } : {}),
    changed: !!stored && stored.hash !== c.hash,
  };
}
