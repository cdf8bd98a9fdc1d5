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
import { announceChange } from "../src/store/changes.browser.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import type { ExportOptions, ItemRecord, RunRecord, StoredCase } from "../src/store/types.ts";
import { readRunFile } from "../src/store/run-file.ts";
import { checkRunFile } from "../src/evals/run-file.ts";

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
  /** The run's summary as of `judged` items (the stored one once the run is finished), without its fingerprint. */
  readonly summary: Omit<EvalSummary, "fingerprint"> | undefined;
  /**
   * True for a first page read before the whole run was: rows in plan order
   * from the items alone (no split or tags yet), and no counts; ask again for the rest.
   */
  readonly partial?: boolean;
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
  /** The run and (while it runs) its items as read: a running run's next read adds only the items stored since. */
  readonly run: RunRecord;
  readonly items: readonly ItemRecord[];
  readonly view: RunView;
  readonly rows: CaseRow[];
  /** The rows' verdict counts, counted once per read (every page asked of the table repeats them). */
  readonly counts: Readonly<Record<CaseVerdict, number>>;
  readonly judged: number;
  readonly status: string;
  readonly summary: Omit<EvalSummary, "fingerprint"> | undefined;
  readonly query: string;
  readonly matchedRows: CaseRow[];
}

const stores = new Map<string, Promise<IdbStore>>();
const loaded = new Map<string, Loaded>();
/** Reads of whole runs under way, so two calls for one run read it once. */
const reading = new Map<string, Promise<Loaded>>();

function storeOf(db: string): Promise<IdbStore> {
  let s = stores.get(db);
  if (!s) {
    s = IdbStore.open(db);
    stores.set(db, s);
  }
  return s;
}

function load(db: string, runId: string): Promise<Loaded> {
  const key = `${db}\u0000${runId}`;
  let read = reading.get(key);
  if (!read) {
    read = readRun(db, runId).finally(() => reading.delete(key));
    reading.set(key, read);
  }
  return read;
}

async function readRun(db: string, runId: string): Promise<Loaded> {
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
  let run: RunRecord | undefined;
  let items: readonly ItemRecord[];
  if (cached && cached.status === "running" && head.status === "running" && cached.run.startedAt === head.startedAt) {
    // Still being judged: its record is as it was (only its status and summary change, at the end), and
    // only the items stored since the last read are read.
    run = cached.run;
    items = withNewItems(
      cached.items,
      await store.itemRange(runId, firstMissing(cached.items), Number.MAX_SAFE_INTEGER),
    );
  } else [run, items] = await Promise.all([store.getRun(runId), store.items(runId)]);
  if (!run) throw new Error(`no run '${runId}' in this browser's store (it may have been deleted)`);
  const view = runView(run, items);
  const rows = caseRows(view);
  const full = run.status === "finished" && run.summary ? (run.summary as unknown as EvalSummary) : summarize(view);
  // The fingerprint holds a hash per case (MBs for a big run): the table never shows it, so it stays here.
  const { fingerprint: _fingerprint, ...summary } = full;
  // The items are kept only while more can come (a finished 100k-case run's would double what is held).
  const kept = run.status === "running" ? items : [];
  const entry: Loaded = {
    run,
    items: kept,
    view,
    rows,
    counts: verdictCounts(rows),
    judged,
    status: run.status,
    summary,
    query: "",
    matchedRows: rows,
  };
  // Keep the last two runs read: a comparison flips between two.
  loaded.delete(key);
  loaded.set(key, entry);
  for (const k of [...loaded.keys()].slice(0, -2)) loaded.delete(k);
  return entry;
}

/**
 * The lowest item index not among `items`: every item not held has an index
 * at or above it, so a read from there finds each new one (and, a run being
 * judged in plan order, little else).
 */
function firstMissing(items: readonly ItemRecord[]): number {
  const seen = new Set<number>();
  for (const item of items) seen.add(item.index);
  let index = 0;
  while (seen.has(index)) index++;
  return index;
}

/** `items` with those of `read` it does not hold yet, in index order. */
function withNewItems(items: readonly ItemRecord[], read: readonly ItemRecord[]): ItemRecord[] {
  const seen = new Set<number>();
  for (const item of items) seen.add(item.index);
  const fresh = read.filter((item) => !seen.has(item.index));
  const all = [...items, ...fresh];
  return fresh.length && fresh[0]!.index < (items.at(-1)?.index ?? -1) ? all.sort((a, b) => a.index - b.index) : all;
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
  options: { readonly quick?: boolean } = {},
): Promise<CaseTablePage> {
  const key = `${db}\u0000${runId}`;
  if (options.quick && !loaded.has(key) && isPlanOrder(query)) {
    const first = await firstRows(db, runId, offset, limit);
    if (first) {
      void load(db, runId).catch(() => undefined); // the whole run, for the next call
      return first;
    }
  }
  const entry = await load(db, runId);
  const q = JSON.stringify(query);
  const matched = entry.query === q ? entry.matchedRows : queryRows(entry.rows, query);
  loaded.set(`${db}\u0000${runId}`, { ...entry, query: q, matchedRows: matched });
  return {
    total: entry.rows.length,
    matched: matched.length,
    counts: entry.counts,
    metrics: entry.view.metrics,
    offset,
    rows: matched.slice(offset, offset + limit),
    judged: entry.judged,
    summary: entry.summary,
  };
}

const isPlanOrder = (q: CaseQuery) =>
  (q.verdict === undefined || q.verdict === "all") &&
  !q.search?.trim() &&
  (q.sort ?? "position") === "position" &&
  !q.descending;

/**
 * The rows from `offset` in plan order, read from the items alone (one key
 * range: item index = case position × repeats + repeat), so a 100k-case
 * run's table shows its first page at once while the whole run loads.
 */
async function firstRows(db: string, runId: string, offset: number, limit: number): Promise<CaseTablePage | undefined> {
  const store = await storeOf(db);
  const head = (await store.runHeads()).find((r) => r.id === runId);
  const config = head?.config as { repeats?: number; evaluators?: { name: string }[] } | undefined;
  if (!head || head.caseCount === undefined || !config?.evaluators) return undefined;
  const repeats = config.repeats ?? 1;
  const items = await store.itemRange(runId, offset * repeats, (offset + limit) * repeats);
  const ids = [...new Set(items.map((i) => i.caseId))];
  const view = runView(
    { ...head, config: { ...head.config, cases: ids.map((id) => ({ id, hash: "", tags: [] })) } },
    items,
  );
  const rows = caseRows(view).map((r) => ({ ...r, position: r.position + offset }));
  const progress = await store.progress(runId);
  return {
    total: head.caseCount,
    matched: head.caseCount,
    counts: { pass: 0, fail: 0, flaky: 0, error: 0, pending: 0 },
    metrics: view.metrics,
    offset,
    rows,
    judged: progress?.done ?? 0,
    summary: head.summary as Omit<EvalSummary, "fingerprint"> | undefined,
    partial: true,
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

/** What a dataset holds, for a form that selects from it: splits and tags with their counts. */
export interface DatasetFacets {
  readonly total: number;
  readonly active: number;
  readonly splits: readonly (readonly [name: string, count: number])[];
  readonly tags: readonly (readonly [name: string, count: number])[];
  /** Share of cases whose expected answer is yes or no (a yes/no task when near 1). */
  readonly yesNoShare: number;
  readonly withImage: number;
}

/** Splits, tags and counts of a stored dataset, read here so the page never loads a large dataset's cases. */
export async function datasetFacets(db: string, datasetId: string): Promise<DatasetFacets> {
  const store = await storeOf(db);
  const cases = await store.cases(datasetId);
  const splits = new Map<string, number>();
  const tags = new Map<string, number>();
  let active = 0;
  let yesNo = 0;
  let withImage = 0;
  for (const c of cases) {
    if (c.status !== "active") continue;
    active++;
    if (c.split !== undefined) splits.set(c.split, (splits.get(c.split) ?? 0) + 1);
    for (const t of c.tags) tags.set(t, (tags.get(t) ?? 0) + 1);
    if (typeof c.expected === "string" && /^(yes|no)$/i.test(c.expected.trim())) yesNo++;
    if (c.input.image !== undefined) withImage++;
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return {
    total: cases.length,
    active,
    splits: sorted(splits),
    tags: sorted(tags),
    yesNoShare: active ? yesNo / active : 0,
    withImage,
  };
}

/**
 * Imports a run file (the CLI's `evalrx-run` JSON) here, off the main thread:
 * parsing and storing a 100k-case run takes seconds. The whole file is
 * checked before anything is stored; a run id already stored is refused.
 */
export async function importRunFile(db: string, file: Blob, name: string): Promise<{ runId: string; items: number }> {
  // The envelope, then (for an eval run) every item against the run's plan — as the CLI checks before a gate.
  const { data } = checkRunFile(await readRunFile(file), name);
  const store = await storeOf(db);
  if (await store.getRun(data.run.id))
    throw new Error(`${name}: run '${data.run.id}' is already stored (delete it first to import it again)`);
  await store.importRun(data);
  announceChange(db, { kind: "runs", id: data.run.id });
  if (data.dataset) announceChange(db, { kind: "datasets", id: data.dataset.id });
  return { runId: data.run.id, items: data.items.length };
}

/** A run as a run file (JSON in a Blob), written here so a big run never blocks the page. */
export async function exportRunFile(db: string, runId: string, options: ExportOptions = {}): Promise<Blob> {
  const store = await storeOf(db);
  const data = await store.exportRun(runId, options);
  return new Blob([JSON.stringify(data)], { type: "application/json" });
}
