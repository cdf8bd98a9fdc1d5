import { deleteDB, openDB, type IDBPDatabase, type IDBPTransaction } from "idb";
import {
  arrayBytes,
  byId,
  byNewest,
  bytesToArray,
  checkCases,
  checkTrace,
  imageHex,
  imageType,
  matchesFilter,
  sha256Hex,
} from "./codec.ts";
import { RunLockedError, StoreError } from "./errors.ts";
import { runHead, type RunHead } from "./heads.ts";
import { buildExport, importInto } from "./portable.ts";
import type {
  DatasetRecord,
  EventInput,
  EventRecord,
  ExportOptions,
  ImageRecord,
  ItemRecord,
  LockOptions,
  RunExport,
  RunFilter,
  RunProgress,
  RunLock,
  RunRecord,
  ScoreRecord,
  StorageUsage,
  Store,
  StoredCase,
  TraceRecord,
} from "./types.ts";

/** Schema versions: 1 the first; 2 adds `runHeads` (light copies of runs for lists). */
const VERSION = 2;
/** Trace arrays are split into chunks of this many bytes, so no single record is huge. */
const TRACE_CHUNK = 1 << 20;
/** An array key greater than every string after the given prefix (arrays sort after strings in IndexedDB). */
const HIGH: never[] = [];

/** Cases per IndexedDB record. */
const PAGE = 1000;

/** A page of a dataset's cases, in the order they were added. */
interface CasePage {
  readonly datasetId: string;
  readonly page: number;
  readonly ids: string[];
  readonly cases: StoredCase[];
}

/** How many pages a dataset has, and a token that changes with every write (to validate cached ids). */
interface CaseMeta {
  readonly datasetId: string;
  readonly pages: number;
  readonly generation: string;
}

function newGeneration(): string {
  return crypto.randomUUID();
}

/** Writes cases as pages numbered from `first`; returns how many pages. */
function writePages(
  store: { put(value: CasePage): Promise<unknown> },
  datasetId: string,
  first: number,
  cases: readonly StoredCase[],
): number {
  let count = 0;
  for (let at = 0; at < cases.length; at += PAGE, count++) {
    const slice = cases.slice(at, at + PAGE);
    quiet(store.put({ datasetId, page: first + count, ids: slice.map((c) => c.id), cases: slice }));
  }
  return count;
}

interface StoredTraceChunk {
  readonly runId: string;
  readonly caseId: string;
  readonly repeat: number;
  readonly name: string;
  readonly chunk: number;
  readonly chunks: number;
  readonly type: string;
  readonly shape: readonly number[];
  readonly axes: readonly string[];
  readonly bytes: Uint8Array;
}

/** The stores of schema version 1. */
function createVersion1(db: IDBPDatabase): void {
  db.createObjectStore("datasets", { keyPath: "id" });
  // Cases live in pages of up to PAGE cases: one IndexedDB record per case costs a request each,
  // which caps imports near 10k rows/s; a page of 1000 is one request.
  db.createObjectStore("casePages", { keyPath: ["datasetId", "page"] });
  db.createObjectStore("caseMeta", { keyPath: "datasetId" });
  db.createObjectStore("images", { keyPath: "hash" });
  db.createObjectStore("runs", { keyPath: "id" });
  db.createObjectStore("items", { keyPath: ["runId", "index"] });
  db.createObjectStore("progress", { keyPath: "runId" });
  db.createObjectStore("events", { keyPath: ["runId", "seq"] });
  db.createObjectStore("traces", { keyPath: ["runId", "caseId", "repeat", "name", "chunk"] });
  db.createObjectStore("scores", { keyPath: ["runId", "name"] });
}

/**
 * The store in the page: IndexedDB through `idb`. Every method is one
 * transaction, so `appendItems` stores items and progress together or not at
 * all, and a tab closed mid-run loses at most the item being judged.
 * A write refused for quota rejects with a `StoreError` (`quota: true`)
 * saying that nothing of that write was kept and earlier writes are intact.
 */
export class IdbStore implements Store {
  readonly #db: IDBPDatabase;
  /** Case ids per dataset as of a `caseMeta` generation, so adding a batch needs no read of every page. */
  readonly #caseIds = new Map<string, { generation: string; ids: Set<string> }>();
  /** Run locks this connection holds. */
  readonly #locks = new Map<string, RunLock>();
  readonly name: string;

  private constructor(db: IDBPDatabase, name: string) {
    this.#db = db;
    this.name = name;
  }

  /** Opens (creating or upgrading) the database `name`. */
  static async open(name = "evalrx"): Promise<IdbStore> {
    const db = await openDB(name, VERSION, {
      async upgrade(db, oldVersion, _newVersion, tx) {
        if (oldVersion < 1) createVersion1(db);
        if (oldVersion < 2) {
          // Lists read heads: a 100k-case run's record is ~10 MB, its head a few hundred bytes.
          const heads = db.createObjectStore("runHeads", { keyPath: "id" });
          for (const run of (await tx.objectStore("runs").getAll()) as RunRecord[]) await heads.put(runHead(run));
        }
      },
      blocking() {
        // A newer version of the app wants to upgrade: let it.
        db.close();
      },
    });
    return new IdbStore(db, name);
  }

  /** Deletes the whole database `name` (tests, "forget everything" in the UI). */
  static async destroy(name: string): Promise<void> {
    await deleteDB(name);
  }

  // Datasets and cases.

  async putDataset(dataset: DatasetRecord, cases?: readonly StoredCase[]): Promise<void> {
    if (cases) checkCases(dataset.id, cases);
    const generation = newGeneration();
    await guard(async () => {
      // "strict": the record says the dataset is whole, so it (and the relaxed case batches committed
      // before it) must be on disk before this resolves.
      const tx = this.#db.transaction(["datasets", "casePages", "caseMeta"], "readwrite", { durability: "strict" });
      if (cases) {
        const pages = tx.objectStore("casePages");
        quiet(pages.delete(IDBKeyRange.bound([dataset.id], [dataset.id, HIGH])));
        const count = writePages(pages, dataset.id, 0, cases);
        quiet(tx.objectStore("caseMeta").put({ datasetId: dataset.id, pages: count, generation }));
      }
      quiet(tx.objectStore("datasets").put(dataset));
      await tx.done;
    }, "putDataset");
    if (cases) this.#caseIds.set(dataset.id, { generation, ids: new Set(cases.map((c) => c.id)) });
  }

  async addCases(datasetId: string, cases: readonly StoredCase[]): Promise<number> {
    checkCases(datasetId, cases);
    const generation = newGeneration();
    let fresh: StoredCase[] = [];
    await guard(async () => {
      // "relaxed": the browser may report the write done before it reaches the disk. A tab closed (or a
      // crash) before it does loses this batch as a whole (pages and their count are one transaction), and
      // an import run again adds exactly the ids that are missing; the dataset's record, written last, waits
      // for the disk ("strict", see putDataset), and with it every batch before it.
      const tx = this.#db.transaction(["casePages", "caseMeta"], "readwrite", { durability: "relaxed" });
      const meta: CaseMeta = (await tx.objectStore("caseMeta").get(datasetId)) ?? {
        datasetId,
        pages: 0,
        generation: "",
      };
      // The ids already stored: from this connection's cache when no other tab wrote since, else read once.
      // The cached set is only added to once the transaction has committed, so a failed write leaves it true.
      const cached = this.#caseIds.get(datasetId);
      let ids: Set<string>;
      if (cached && cached.generation === meta.generation) ids = cached.ids;
      else {
        const pages: CasePage[] = await tx
          .objectStore("casePages")
          .getAll(IDBKeyRange.bound([datasetId], [datasetId, HIGH]));
        ids = new Set();
        for (const p of pages) for (const id of p.ids) ids.add(id);
      }
      fresh = cases.filter((c) => !ids.has(c.id));
      if (fresh.length) {
        const count = writePages(tx.objectStore("casePages"), datasetId, meta.pages, fresh);
        quiet(tx.objectStore("caseMeta").put({ datasetId, pages: meta.pages + count, generation }));
      }
      await tx.done;
      for (const c of fresh) ids.add(c.id);
      this.#caseIds.set(datasetId, { generation: fresh.length ? generation : meta.generation, ids });
    }, "addCases");
    return fresh.length;
  }

  async getDataset(id: string): Promise<DatasetRecord | undefined> {
    return this.#db.get("datasets", id);
  }

  async listDatasets(): Promise<DatasetRecord[]> {
    return this.#db.getAll("datasets");
  }

  async cases(datasetId: string): Promise<StoredCase[]> {
    const pages: CasePage[] = await this.#db.getAll("casePages", IDBKeyRange.bound([datasetId], [datasetId, HIGH]));
    return pages.flatMap((p) => p.cases).sort(byId);
  }

  /**
   * One page of a dataset's cases (up to 1000, in the order they were added;
   * pages are numbered from 0), or undefined past the last page: a page can
   * show a large dataset's first rows before the rest is read.
   */
  async casePage(datasetId: string, page: number): Promise<StoredCase[] | undefined> {
    const stored: CasePage | undefined = await this.#db.get("casePages", [datasetId, page]);
    return stored?.cases;
  }

  async getCase(datasetId: string, caseId: string): Promise<StoredCase | undefined> {
    const range = IDBKeyRange.bound([datasetId], [datasetId, HIGH]);
    for (
      let cursor = await this.#db.transaction("casePages").store.openCursor(range);
      cursor;
      cursor = await cursor.continue()
    ) {
      const page = cursor.value as CasePage;
      const at = page.ids.indexOf(caseId);
      if (at >= 0) return page.cases[at];
    }
    return undefined;
  }

  async deleteDataset(id: string): Promise<void> {
    const tx = this.#db.transaction(["datasets", "casePages", "caseMeta"], "readwrite");
    quiet(tx.objectStore("casePages").delete(IDBKeyRange.bound([id], [id, HIGH])));
    quiet(tx.objectStore("caseMeta").delete(id));
    quiet(tx.objectStore("datasets").delete(id));
    await tx.done;
    this.#caseIds.delete(id);
  }

  // Images.

  async putImage(bytes: Uint8Array, type?: string): Promise<string> {
    const hash = `sha256:${sha256Hex(bytes)}`;
    await guard(async () => {
      const tx = this.#db.transaction("images", "readwrite");
      if ((await tx.store.getKey(hash)) === undefined)
        quiet(tx.store.put({ hash, bytes: bytes.slice(), type: type ?? imageType(bytes) }));
      await tx.done;
    }, "putImage");
    return hash;
  }

  async getImage(hash: string): Promise<ImageRecord | undefined> {
    return this.#db.get("images", `sha256:${imageHex(hash)}`);
  }

  async getImages(hashes: readonly string[]): Promise<(ImageRecord | undefined)[]> {
    const keys = hashes.map((hash) => `sha256:${imageHex(hash)}`);
    // One transaction for all: a transaction per image queued behind a running eval's writes (108 ms each on average).
    const tx = this.#db.transaction("images", "readonly");
    const records = await Promise.all(keys.map((key) => tx.store.get(key) as Promise<ImageRecord | undefined>));
    await tx.done;
    return records;
  }

  async hasImage(hash: string): Promise<boolean> {
    return (await this.#db.getKey("images", `sha256:${imageHex(hash)}`)) !== undefined;
  }

  // Runs.

  async createRun(run: RunRecord): Promise<void> {
    await guard(async () => {
      const tx = this.#db.transaction(["runs", "runHeads"], "readwrite");
      if ((await tx.objectStore("runs").getKey(run.id)) !== undefined) {
        abort(tx);
        throw new StoreError(`createRun(): a run '${run.id}' already exists`);
      }
      quiet(tx.objectStore("runs").add(run));
      quiet(tx.objectStore("runHeads").put(runHead(run)));
      await tx.done;
    }, "createRun");
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.#db.get("runs", id);
  }

  /**
   * Light copies of the runs (see `runHead`), newest first: what lists show,
   * read without the per-case config of each run.
   */
  async runHeads(filter?: RunFilter): Promise<RunHead[]> {
    const heads: RunHead[] = await this.#db.getAll("runHeads");
    return heads.filter((r) => matchesFilter(r, filter)).sort(byNewest);
  }

  async listRuns(filter?: RunFilter): Promise<RunRecord[]> {
    const runs: RunRecord[] = await this.#db.getAll("runs");
    return runs.filter((r) => matchesFilter(r, filter)).sort(byNewest);
  }

  async updateRun(
    id: string,
    changes: Partial<Pick<RunRecord, "status" | "finishedAt" | "summary" | "config">>,
  ): Promise<void> {
    await this.#checkWriter(id);
    await guard(async () => {
      // Finishing a run waits until the browser has it on disk ("strict"): a finished run holds what it reports.
      const tx = this.#db.transaction(["runs", "runHeads"], "readwrite", {
        durability: changes.status === "finished" ? "strict" : "default",
      });
      const run: RunRecord | undefined = await tx.objectStore("runs").get(id);
      if (!run) {
        abort(tx);
        throw new StoreError(`updateRun(): no run '${id}'`);
      }
      const updated = { ...run, ...changes };
      quiet(tx.objectStore("runs").put(updated));
      quiet(tx.objectStore("runHeads").put(runHead(updated)));
      await tx.done;
    }, "updateRun");
  }

  async deleteRun(id: string): Promise<void> {
    await this.#checkWriter(id);
    const stores = ["runs", "runHeads", "items", "progress", "events", "traces", "scores"] as const;
    const tx = this.#db.transaction([...stores], "readwrite");
    quiet(tx.objectStore("runs").delete(id));
    quiet(tx.objectStore("runHeads").delete(id));
    quiet(tx.objectStore("progress").delete(id));
    for (const name of ["items", "events", "traces", "scores"] as const)
      quiet(tx.objectStore(name).delete(IDBKeyRange.bound([id], [id, HIGH])));
    await tx.done;
  }

  async appendItems(runId: string, items: readonly ItemRecord[], progress: Omit<RunProgress, "runId">): Promise<void> {
    const seen = new Set<number>();
    for (const item of items) {
      if (item.runId !== runId)
        throw new StoreError(`appendItems(): item ${item.index} belongs to run '${item.runId}', not '${runId}'`);
      if (seen.has(item.index))
        throw new StoreError(
          `appendItems(): item ${item.index} of run '${runId}' is already stored; each item is judged once`,
        );
      seen.add(item.index);
    }
    await this.#checkWriter(runId);
    await guard(async () => {
      const tx = this.#db.transaction(["runs", "items", "progress"], "readwrite");
      // A few items: one key lookup each. Many (an imported run): one read of the keys in their index range,
      // since a request per item would cost more than the writes themselves.
      const bulk = items.length > 16;
      let low = Infinity;
      let high = -Infinity;
      for (const item of items) {
        low = Math.min(low, item.index);
        high = Math.max(high, item.index);
      }
      const [run, ...existing] = await Promise.all([
        tx.objectStore("runs").getKey(runId),
        ...(bulk
          ? [tx.objectStore("items").getAllKeys(IDBKeyRange.bound([runId, low], [runId, high])) as Promise<unknown>]
          : items.map((item) => tx.objectStore("items").getKey([runId, item.index]))),
      ]);
      if (run === undefined) {
        abort(tx);
        throw new StoreError(`appendItems(): no run '${runId}'; create it with createRun() first`);
      }
      const stored = bulk ? new Set((existing[0] as [string, number][]).map((key) => key[1])) : undefined;
      const duplicate = items.find((item, i) => (stored ? stored.has(item.index) : existing[i] !== undefined));
      if (duplicate) {
        abort(tx);
        throw new StoreError(
          `appendItems(): item ${duplicate.index} of run '${runId}' is already stored; each item is judged once`,
          { items: 0 },
        );
      }
      for (const item of items) quiet(tx.objectStore("items").add(item));
      quiet(tx.objectStore("progress").put({ ...progress, runId }));
      await tx.done;
    }, "appendItems");
  }

  /**
   * Items `from` ≤ index < `to` of a run, in index order: one read, whatever
   * the run's size (a table's first page of a 100k-item run).
   */
  async itemRange(runId: string, from: number, to: number): Promise<ItemRecord[]> {
    if (to <= from) return [];
    return this.#db.getAll("items", IDBKeyRange.bound([runId, from], [runId, to], false, true));
  }

  async items(runId: string): Promise<ItemRecord[]> {
    return this.#db.getAll("items", IDBKeyRange.bound([runId], [runId, HIGH]));
  }

  async progress(runId: string): Promise<RunProgress | undefined> {
    return this.#db.get("progress", runId);
  }

  async appendEvents(runId: string, events: readonly EventInput[]): Promise<EventRecord[]> {
    await this.#checkWriter(runId);
    return guard(async () => {
      const tx = this.#db.transaction(["runs", "events"], "readwrite");
      if ((await tx.objectStore("runs").getKey(runId)) === undefined) {
        abort(tx);
        throw new StoreError(`appendEvents(): no run '${runId}'; create it with createRun() first`);
      }
      const store = tx.objectStore("events");
      const last = await store.openKeyCursor(IDBKeyRange.bound([runId], [runId, HIGH]), "prev");
      let seq = last ? (last.key as [string, number])[1] + 1 : 0;
      const now = new Date().toISOString();
      const records: EventRecord[] = events.map((e) => ({ ...e, runId, seq: seq++, ts: e.ts ?? now }));
      for (const r of records) quiet(store.add(r));
      await tx.done;
      return records;
    }, "appendEvents");
  }

  async events(runId: string, fromSeq = 0): Promise<EventRecord[]> {
    return this.#db.getAll("events", IDBKeyRange.bound([runId, fromSeq], [runId, Infinity]));
  }

  async putTraces(traces: readonly TraceRecord[]): Promise<void> {
    for (const trace of traces) checkTrace(trace);
    for (const runId of new Set(traces.map((t) => t.runId))) await this.#checkWriter(runId);
    await guard(async () => {
      const tx = this.#db.transaction(["runs", "traces"], "readwrite");
      await requireRuns(tx, traces, "putTraces");
      const store = tx.objectStore("traces");
      for (const t of traces) {
        const key = [t.runId, t.caseId, t.repeat, t.name];
        quiet(store.delete(IDBKeyRange.bound([...key, 0], [...key, Infinity])));
        const bytes = arrayBytes(t.data);
        const chunks = Math.max(1, Math.ceil(bytes.byteLength / TRACE_CHUNK));
        for (let chunk = 0; chunk < chunks; chunk++) {
          const record: StoredTraceChunk = {
            runId: t.runId,
            caseId: t.caseId,
            repeat: t.repeat,
            name: t.name,
            chunk,
            chunks,
            type: t.data[Symbol.toStringTag],
            shape: t.shape,
            axes: t.axes,
            bytes: bytes.slice(chunk * TRACE_CHUNK, (chunk + 1) * TRACE_CHUNK),
          };
          quiet(store.put(record));
        }
      }
      await tx.done;
    }, "putTraces");
  }

  async traces(
    runId: string,
    filter: { readonly caseId?: string; readonly name?: string } = {},
  ): Promise<TraceRecord[]> {
    const range =
      filter.caseId !== undefined
        ? IDBKeyRange.bound([runId, filter.caseId], [runId, filter.caseId, HIGH])
        : IDBKeyRange.bound([runId], [runId, HIGH]);
    const chunks: StoredTraceChunk[] = await this.#db.getAll("traces", range);
    const out: TraceRecord[] = [];
    for (let i = 0; i < chunks.length;) {
      const first = chunks[i]!;
      const parts = chunks.slice(i, i + first.chunks);
      i += first.chunks;
      if (filter.name !== undefined && first.name !== filter.name) continue;
      const size = parts.reduce((n, p) => n + p.bytes.byteLength, 0);
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const p of parts) {
        bytes.set(p.bytes, at);
        at += p.bytes.byteLength;
      }
      out.push({
        runId: first.runId,
        caseId: first.caseId,
        repeat: first.repeat,
        name: first.name,
        shape: first.shape,
        axes: first.axes,
        data: bytesToArray(first.type, bytes),
      });
    }
    return out;
  }

  async putScores(scores: readonly ScoreRecord[]): Promise<void> {
    for (const runId of new Set(scores.map((s) => s.runId))) await this.#checkWriter(runId);
    await guard(async () => {
      const tx = this.#db.transaction(["runs", "scores"], "readwrite");
      await requireRuns(tx, scores, "putScores");
      for (const s of scores) quiet(tx.objectStore("scores").put(s));
      await tx.done;
    }, "putScores");
  }

  async scores(runId: string): Promise<ScoreRecord[]> {
    return this.#db.getAll("scores", IDBKeyRange.bound([runId], [runId, HIGH]));
  }

  // One writer per run.

  /**
   * The run's writer lock is a Web Lock (`navigator.locks`) named after this
   * database and the run, so every tab and worker of the origin sees it; the
   * browser releases it when the holder's tab or worker goes away.
   */
  async lockRun(runId: string, options: LockOptions = {}): Promise<RunLock> {
    const lock = await takeWebLock(runLockName(this.name, runId), runId, options);
    this.#locks.set(runId, lock);
    return {
      ...lock,
      release: async () => {
        if (this.#locks.get(runId) === lock) this.#locks.delete(runId);
        await lock.release();
      },
    };
  }

  async runLockHolder(runId: string): Promise<string | undefined> {
    return webLockHolder(runLockName(this.name, runId));
  }

  /** Refuses a write to a run whose lock another connection, tab or worker holds. */
  async #checkWriter(runId: string): Promise<void> {
    const mine = this.#locks.get(runId);
    if (mine && !mine.lost.aborted) return;
    const holder = await webLockHolder(runLockName(this.name, runId));
    if (holder) throw new RunLockedError(runId, holder);
  }

  // Export / import.

  async exportRun(runId: string, options: ExportOptions = {}): Promise<RunExport> {
    const run = await this.getRun(runId);
    if (!run) throw new StoreError(`exportRun(): no run '${runId}'`);
    return buildExport(this, run, options);
  }

  async importRun(data: RunExport): Promise<void> {
    await importInto(this, data);
  }

  /** What this origin stores and may store (the browser's estimate), and whether storage is persistent. */
  async usage(): Promise<StorageUsage> {
    const storage = navigator.storage;
    if (!storage?.estimate) return { persisted: false };
    const [estimate, persisted] = await Promise.all([storage.estimate(), storage.persisted?.() ?? false]);
    return {
      ...(estimate.usage !== undefined && { usage: estimate.usage }),
      ...(estimate.quota !== undefined && { quota: estimate.quota }),
      persisted,
    };
  }

  async close(): Promise<void> {
    for (const lock of [...this.#locks.values()]) await lock.release();
    this.#locks.clear();
    this.#db.close();
  }
}

/** The Web Lock name of a run's writer: scoped by database, so two stores in one origin do not collide. */
function runLockName(database: string, runId: string): string {
  return `evalrx:${database}:run:${runId}`;
}

/** Web Locks this realm (tab or worker) holds, so a refusal can say the holder is here. */
const heldHere = new Set<string>();
/** Where the browser has no Web Locks API (an insecure origin): locks held in this realm only. */
const localOnly = new Set<string>();

function here(): string {
  return typeof window === "undefined" ? "this worker" : "this tab";
}

async function webLockHolder(name: string): Promise<string | undefined> {
  const locks = globalThis.navigator?.locks;
  if (!locks) return localOnly.has(name) ? `${here()} (no Web Locks API: other tabs are not seen)` : undefined;
  const { held = [] } = await locks.query();
  if (!held.some((l) => l.name === name)) return undefined;
  return heldHere.has(name) ? `another writer in ${here()}` : "another tab or worker of this page";
}

function takeWebLock(name: string, runId: string, options: LockOptions): Promise<RunLock> {
  const locks = globalThis.navigator?.locks;
  if (!locks) {
    // No cross-tab exclusion is possible without the API; still one writer per run within this realm.
    if (localOnly.has(name)) return Promise.reject(new RunLockedError(runId, `another writer in ${here()}`));
    localOnly.add(name);
    const lost = new AbortController();
    return Promise.resolve({
      runId,
      holder: `${here()} (no Web Locks API: other tabs are not excluded)`,
      lost: lost.signal,
      release: async () => void localOnly.delete(name),
    });
  }
  return new Promise<RunLock>((resolve, reject) => {
    let letGo: () => void = () => undefined;
    const holding = new Promise<void>((r) => (letGo = r));
    const lost = new AbortController();
    let granted = false;
    const request = locks.request(
      name,
      options.wait ? { mode: "exclusive", ...(options.signal && { signal: options.signal }) } : { ifAvailable: true },
      async (lock) => {
        if (!lock) {
          reject(new RunLockedError(runId, (await webLockHolder(name)) ?? "another tab or worker of this page"));
          return;
        }
        granted = true;
        heldHere.add(name);
        let released: Promise<void> | undefined;
        resolve({
          runId,
          holder: here(),
          lost: lost.signal,
          release: () =>
            (released ??= (async () => {
              letGo();
              await request.catch(() => undefined);
            })()),
        });
        try {
          await holding;
        } finally {
          heldHere.delete(name);
        }
      },
    );
    request.catch((error: unknown) => {
      if (granted) lost.abort(new RunLockedError(runId, "another tab or worker (the lock was taken from this one)"));
      else reject(options.signal?.aborted ? options.signal.reason : error);
    });
  });
}

/**
 * Asks the browser to keep this origin's data under storage pressure
 * (`navigator.storage.persist()`); returns whether it agreed. Call it once
 * the user has something worth keeping (the first import or run).
 */
export async function requestPersistentStorage(): Promise<boolean> {
  if (!navigator.storage?.persist) return false;
  if (await navigator.storage.persisted()) return true;
  return navigator.storage.persist();
}

/** Queued requests settle with the transaction; their own rejections are reported by `tx.done`. */
function quiet(request: Promise<unknown>): void {
  request.catch(() => undefined);
}

/** Rolls a transaction back without leaving its `done` promise rejected and unobserved. */
function abort(tx: { abort(): void; readonly done: Promise<void> }): void {
  tx.done.catch(() => undefined);
  tx.abort();
}

/** Rolls the transaction back with a `StoreError` when a record names a run that was never created. */
async function requireRuns(
  tx: IDBPTransaction<unknown, ["runs", ...string[]], "readwrite">,
  records: readonly { readonly runId: string }[],
  what: string,
): Promise<void> {
  const runIds = [...new Set(records.map((r) => r.runId))];
  const known = await Promise.all(runIds.map((id) => tx.objectStore("runs").getKey(id)));
  const missing = runIds.find((_, i) => known[i] === undefined);
  if (missing !== undefined) {
    abort(tx);
    throw new StoreError(`${what}(): no run '${missing}'; create it with createRun() first`);
  }
}

/** Runs one transaction's work and turns storage failures into a `StoreError` saying what was kept. */
async function guard<T>(work: () => Promise<T>, what: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const name = (error as DOMException)?.name;
    if (name === "QuotaExceededError")
      throw new StoreError(
        `${what}(): the browser's storage quota is used up; nothing of this write was kept (earlier writes are intact). ` +
          "Free space (delete old runs or traces) and resume.",
        { items: 0, cases: 0 },
        true,
        { cause: error },
      );
    if (name === "AbortError" || name === "ConstraintError" || name === "UnknownError")
      throw new StoreError(`${what}(): the write was rolled back (${name}: ${(error as Error).message})`, {}, false, {
        cause: error,
      });
    throw error;
  }
}
