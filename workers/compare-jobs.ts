/**
 * The Compare page's jobs, answered in the stats worker from IndexedDB: the
 * page names runs by id and never holds their items (two 100k-case runs
 * stay here). Each job reads the runs (kept, so flipping the tolerance or
 * the metrics reads nothing again), then calls the pure jobs of
 * `stats-jobs.ts` — the library's `gate`, `compare`, `calibrate`, `power`.
 *
 * Newest request wins: every call carries a ticket, a newer ticket of the
 * same kind supersedes the older call, which stops at its next step with a
 * `CancelledError` (the page drops it). Progress is reported per step.
 */
import { transfer } from "comlink";
import { runView, type RunView } from "../src/evals/run-view.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import {
  calibrateJob,
  caseOutputs,
  compareJob,
  powerJob,
  type CaseOutputs,
  type CompareJobOptions,
  type CompareJobResult,
  type PowerJobOptions,
  type PowerJobResult,
} from "./stats-jobs.ts";
import type { Calibration } from "../src/evals/index.ts";

/** A step of a job, for the page's progress line. */
export interface JobProgress {
  readonly step: string;
  readonly done: number;
  readonly total: number;
}

export type JobKind = "compare" | "calibrate" | "power";

const stores = new Map<string, Promise<IdbStore>>();
const views = new Map<string, { token: string; view: RunView; model: string }>();
const latest = new Map<JobKind, number>();
/** Views kept: a comparison flips between two runs, a calibration reads a few. */
const KEEP = 4;

function storeOf(db: string): Promise<IdbStore> {
  let s = stores.get(db);
  if (!s) {
    s = IdbStore.open(db);
    stores.set(db, s);
    s.catch(() => stores.delete(db));
  }
  return s;
}

function cancelled(kind: JobKind): Error {
  return Object.assign(new Error(`this ${kind} was superseded by a newer one`), { name: "CancelledError" });
}

/** Throws when a newer call of `kind` has started since the one holding `ticket`. */
function check(kind: JobKind, ticket: number): void {
  if (latest.get(kind) !== ticket) throw cancelled(kind);
}

function begin(kind: JobKind, ticket: number): void {
  if (!Number.isFinite(ticket)) throw new TypeError(`${kind}: ticket must be a number, got ${String(ticket)}`);
  if ((latest.get(kind) ?? -Infinity) > ticket) throw cancelled(kind);
  latest.set(kind, ticket);
}

/**
 * Run `id` as a `RunView`, read once and kept while it does not change (its
 * status and judged items are checked on every call, so a running run is read again as it grows).
 */
async function viewOf(db: string, id: string): Promise<{ view: RunView; model: string }> {
  const store = await storeOf(db);
  const [run, progress] = await Promise.all([store.getRun(id), store.progress(id)]);
  if (!run) throw new Error(`no run '${id}' in this browser's store (it may have been deleted); pick another run`);
  const token = `${run.status}|${run.finishedAt ?? ""}|${progress?.done ?? 0}|${progress?.updatedAt ?? ""}`;
  const key = `${db}\u0000${id}`;
  const kept = views.get(key);
  if (kept && kept.token === token) {
    views.delete(key);
    views.set(key, kept);
    return kept;
  }
  const entry = { token, view: runView(run, await store.items(id)), model: run.model };
  views.delete(key);
  views.set(key, entry);
  for (const k of [...views.keys()].slice(0, -KEEP)) views.delete(k);
  return entry;
}

async function readViews(
  db: string,
  ids: readonly string[],
  kind: JobKind,
  ticket: number,
  onProgress?: (p: JobProgress) => void,
): Promise<{ view: RunView; model: string }[]> {
  const out: { view: RunView; model: string }[] = [];
  for (const [i, id] of ids.entries()) {
    onProgress?.({ step: `reading run ${id}`, done: i, total: ids.length + 1 });
    out.push(await viewOf(db, id));
    check(kind, ticket);
  }
  return out;
}

/**
 * Compares two stored runs and gates the candidate against the baseline,
 * as `evalrx gate <candidate> --baseline <baseline> --tolerance T` does.
 *
 * @example await stats.compareStored("evalrx", "base", "cand", { tolerance: 0.03 }, 1, proxy(onProgress))
 */
export async function compareStored(
  db: string,
  baselineId: string,
  candidateId: string,
  options: CompareJobOptions,
  ticket: number,
  onProgress?: (p: JobProgress) => void,
): Promise<CompareJobResult> {
  begin("compare", ticket);
  if (baselineId === candidateId)
    throw new Error(`run '${baselineId}' cannot be compared with itself: pick two different runs`);
  const [a, b] = await readViews(db, [baselineId, candidateId], "compare", ticket, onProgress);
  onProgress?.({ step: "comparing (the gate's tests)", done: 2, total: 3 });
  const result = compareJob(a!.view, b!.view, options, { baseline: a!.model, candidate: b!.model });
  check("compare", ticket);
  const { cases } = result;
  return transfer(result, [cases.kind.buffer, cases.baseline.buffer, cases.candidate.buffer, cases.differs.buffer]);
}

/**
 * The answers of some cases in both runs (the rows the page shows), from the runs already read.
 *
 * @example await stats.caseOutputsStored("evalrx", "base", "cand", ["c07", "c12"])
 */
export async function caseOutputsStored(
  db: string,
  baselineId: string,
  candidateId: string,
  ids: readonly string[],
): Promise<CaseOutputs[]> {
  const [a, b] = await Promise.all([viewOf(db, baselineId), viewOf(db, candidateId)]);
  return caseOutputs(a.view, b.view, ids);
}

/**
 * The A/A noise floor of stored runs of one eval, as `evalrx calibrate` computes it.
 *
 * @example await stats.calibrateStored("evalrx", ["aa-1", "aa-2", "aa-3"], { target: 0.03 }, 1)
 */
export async function calibrateStored(
  db: string,
  runIds: readonly string[],
  options: { target?: number; alpha?: number; simulations?: number },
  ticket: number,
  onProgress?: (p: JobProgress) => void,
): Promise<Calibration> {
  begin("calibrate", ticket);
  const runs = await readViews(db, runIds, "calibrate", ticket, onProgress);
  onProgress?.({ step: "simulating A/A comparisons", done: runIds.length, total: runIds.length + 1 });
  return calibrateJob(
    runs.map((r) => r.view),
    options,
  );
}

/**
 * The gate's power for a drop at the baseline's own cases, and the cases a
 * drop needs, by simulation of the gate's rule (`power`, as `evalrx power`).
 *
 * @example await stats.powerStored("evalrx", "base", { drop: 0.05, tolerance: 0.03 }, 1)
 */
export async function powerStored(
  db: string,
  baselineId: string,
  options: PowerJobOptions,
  ticket: number,
  onProgress?: (p: JobProgress) => void,
): Promise<PowerJobResult> {
  begin("power", ticket);
  const [baseline] = await readViews(db, [baselineId], "power", ticket, onProgress);
  onProgress?.({ step: "simulating gates", done: 1, total: 2 });
  return powerJob(baseline!.view, options);
}

/**
 * Stops the running call of `kind` at its next step (a cancel button), and any older one.
 *
 * @example await stats.supersede("calibrate")
 */
export function supersede(kind: JobKind): void {
  latest.set(kind, (latest.get(kind) ?? 0) + 0.5);
}
