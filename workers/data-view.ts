/**
 * One dataset's cases, held in the data worker while its page is open: read
 * from IndexedDB a page (1000 cases) at a time, so the first rows show before
 * the rest is read, filtered here (the filter language, the split/tag/status
 * filters), and handed to the page a window of rows at a time. The page never
 * holds 100k cases, and no filter or count runs on its thread.
 */
import { holdout, select, type Selection } from "../src/datasets/index.ts";
import type { DatasetRecord, StoredCase } from "../src/store/types.ts";
import {
  caseFilter,
  FacetCounter,
  isEmptyFilter,
  rowView,
  type CaseFilter,
  type CaseRowView,
  type Facets,
} from "../src/ui/pages/datasets/case-filter.ts";
import { FilterSyntaxError } from "../src/ui/pages/datasets/filter-expression.ts";
import { openStore } from "./data-import.ts";

interface View {
  readonly record: DatasetRecord;
  readonly cases: StoredCase[];
  /** Resolves once every page is read. */
  loaded: Promise<void>;
  done: boolean;
  /** Called whenever a page arrives (rows waiting for it). */
  readonly waiting: Set<() => void>;
  /** Indices (into `cases`) the current filter keeps; undefined: every case. */
  matches: Uint32Array | undefined;
  generation: number;
  facets: Facets | undefined;
}

const views = new Map<number, View>();
let nextView = 1;

/** What the page learns when it opens a dataset. */
export interface ViewOpened {
  readonly viewId: number;
  readonly record: DatasetRecord;
  /** Cases read so far (the first page; the rest follow). */
  readonly loaded: number;
  /** The view's filter generation: no filter yet (every case), for `rows`. */
  readonly generation: number;
  /** Its first rows, so the table shows them without another round trip. */
  readonly rows: readonly CaseRowView[];
}

/**
 * Opens dataset `datasetId` of database `db`: resolves as soon as its first
 * page of cases is read, with its first `firstRows` rows, and goes on reading
 * the rest (`onLoaded` hears how many cases are in so far, and when all are).
 * Throws when there is no such dataset.
 */
export async function openView(
  db: string,
  datasetId: string,
  onLoaded?: (loaded: number, done: boolean) => void,
  firstRows = 100,
): Promise<ViewOpened> {
  const store = await openStore(db);
  const record = await store.getDataset(datasetId);
  if (!record) throw new Error(`there is no dataset '${datasetId}' in this browser (it may have been deleted)`);
  const first = (await store.casePage(datasetId, 0)) ?? [];
  const cases: StoredCase[] = [...first];
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiting]) w();
  };
  const view: View = {
    record,
    cases,
    done: false,
    waiting,
    matches: undefined,
    generation: 0,
    facets: undefined,
    loaded: Promise.resolve(),
  };
  const readRest = async () => {
    try {
      if (first.length)
        for (let page = 1; ; page++) {
          const next = await store.casePage(datasetId, page);
          if (!next) break;
          for (const c of next) cases.push(c);
          onLoaded?.(cases.length, false);
          wake();
        }
    } finally {
      view.done = true;
      onLoaded?.(cases.length, true);
      wake();
    }
  };
  view.loaded = readRest();
  const viewId = nextView++;
  views.set(viewId, view);
  const rows = cases.slice(0, firstRows).map((c, i) => rowView(c, i));
  return { viewId, record, loaded: cases.length, generation: view.generation, rows };
}

function get(viewId: number): View {
  const view = views.get(viewId);
  if (!view) throw new Error(`dataset view ${viewId} is closed`);
  return view;
}

/** Waits until at least `count` cases are read (or all are). */
function until(view: View, count: number): Promise<void> {
  if (view.done || view.cases.length >= count) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (view.done || view.cases.length >= count) {
        view.waiting.delete(check);
        resolve();
      }
    };
    view.waiting.add(check);
  });
}

/** The result of a filter: how many cases it keeps, or where the expression could not be read. */
export type QueryResult =
  | { readonly generation: number; readonly count: number; readonly total: number }
  | { readonly generation: number; readonly error: string; readonly position: number }
  /** A newer filter arrived before this one finished: drop it. */
  | { readonly generation: number; readonly stale: true };

/**
 * Applies `filter` to the view (newest wins: a filter overtaken by a newer
 * one answers `stale`). The empty filter answers at once; any other waits
 * until every case is read.
 */
export async function query(viewId: number, filter: CaseFilter): Promise<QueryResult> {
  const view = get(viewId);
  const generation = ++view.generation;
  if (isEmptyFilter(filter)) {
    view.matches = undefined;
    return { generation, count: view.done ? view.cases.length : view.record.caseCount, total: view.record.caseCount };
  }
  let keep;
  try {
    keep = caseFilter(filter);
  } catch (error) {
    if (error instanceof FilterSyntaxError) return { generation, error: error.message, position: error.position };
    throw error;
  }
  await view.loaded;
  if (generation !== view.generation) return { generation, stale: true };
  const kept: number[] = [];
  view.cases.forEach((c, i) => {
    if (keep(c)) kept.push(i);
  });
  view.matches = Uint32Array.from(kept);
  return { generation, count: kept.length, total: view.cases.length };
}

/**
 * Rows `from` … `to - 1` of the filtered view, as the table shows them, or
 * undefined when `generation` is no longer the view's filter.
 */
export async function rows(
  viewId: number,
  generation: number,
  from: number,
  to: number,
): Promise<CaseRowView[] | undefined> {
  const view = get(viewId);
  if (generation !== view.generation) return undefined;
  if (!view.matches) {
    await until(view, to);
    if (generation !== view.generation) return undefined;
    const end = Math.min(to, view.cases.length);
    const out: CaseRowView[] = [];
    for (let i = from; i < end; i++) out.push(rowView(view.cases[i]!, i));
    return out;
  }
  const matches = view.matches;
  const out: CaseRowView[] = [];
  for (let k = from; k < Math.min(to, matches.length); k++) out.push(rowView(view.cases[matches[k]!]!, matches[k]!));
  return out;
}

/** The whole case at dataset position `index` (input, expected, meta), for the case detail. */
export async function caseAt(viewId: number, index: number): Promise<StoredCase | undefined> {
  const view = get(viewId);
  await until(view, index + 1);
  return view.cases[index];
}

/** How the dataset's cases spread over splits, tags, statuses and labels (once all are read). */
export async function facets(viewId: number): Promise<Facets> {
  const view = get(viewId);
  await view.loaded;
  if (!view.facets) {
    const counter = new FacetCounter();
    for (const c of view.cases) counter.add(c);
    view.facets = counter.result();
  }
  return view.facets;
}

/** What a selection and a holdout split would take, with the CLI's own functions. */
export interface SelectionPreview {
  /** Cases `select()` gives. */
  readonly selected: number;
  /** Of those, the cases the investigation may look at, and the sealed ones. */
  readonly explore: number;
  readonly sealed: number;
  readonly sealedFraction: number;
}

export interface HoldoutChoice {
  readonly fraction: number;
  readonly by: "cluster" | "id";
  /** The investigation's seed: the holdout's salt is `evalrx-holdout-<seed>`, as `evalrx investigate --seed` uses. */
  readonly seed: number;
}

/**
 * How many cases `select(cases, selection)` gives on this dataset, and how
 * `holdout` (salted as the investigation salts it) splits those: the same
 * functions the CLI runs, so the numbers are the ones a run would use.
 */
export async function preview(viewId: number, selection: Selection, split: HoldoutChoice): Promise<SelectionPreview> {
  const view = get(viewId);
  await view.loaded;
  const selected = select(view.cases, selection);
  const { explore, sealed, sealedFraction } = holdout(selected, split.fraction, {
    by: split.by,
    salt: `evalrx-holdout-${split.seed}`,
  });
  return { selected: selected.length, explore: explore.length, sealed: sealed.length, sealedFraction };
}

/** Forgets the view's cases. */
export function closeView(viewId: number): void {
  views.delete(viewId);
}
