import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import {
  appendFile,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  statfs,
  truncate,
  writeFile,
} from "node:fs/promises";
import { dirname, join } from "node:path";
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
import { buildExport, importInto } from "./portable.ts";
import { StoreError } from "./errors.ts";
import { FileLock } from "./lock.node.ts";
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

/**
 * The store as a directory of files, for the CLI and the companion:
 *
 * ```
 * datasets/<id>.json           the record (temp file + rename)
 * datasets/<id>.cases.jsonl    cases, one per line (rewritten by putDataset, appended by addCases)
 * images/<sha256 hex>          image bytes; images/<hex>.type its MIME type
 * runs/<id>/run.json           the run record (temp file + rename)
 * runs/<id>/items.jsonl        one line per appendItems call: {"items": [...], "progress": {...}}
 * runs/<id>/events.jsonl       one event per line
 * runs/<id>/scores.json        scores by name (temp file + rename)
 * runs/<id>/traces/<n>.bin     one trace's array bytes; <n>.json its header (written last)
 * locks/<id>.lock              the run's writer: pid, host, token; its mtime is the heartbeat
 * ```
 *
 * Append-only logs hold whole lines: a line is written by one `write` and
 * counts only once its newline is there, so a process killed mid-append
 * leaves a torn tail that readers ignore and the next append cuts off. Items
 * and their progress marker share one line, so they are stored together or not at all.
 * One writer per run (`lockRun`): while a live process holds a run's lock,
 * writes to that run from anyone else are refused.
 */
export class FileStore implements Store {
  readonly #root: string;
  readonly #caseIds = new Map<string, Set<string>>();
  readonly #eventCount = new Map<string, number>();
  readonly #itemIndexes = new Map<string, Set<number>>();
  /** Run locks this store holds, by run id. */
  readonly #locks = new Map<string, FileLock>();

  private constructor(root: string) {
    this.#root = root;
  }

  /** Opens (creating if needed) the store in `dir`. */
  static async open(dir: string): Promise<FileStore> {
    await mkdir(join(dir, "datasets"), { recursive: true });
    await mkdir(join(dir, "images"), { recursive: true });
    await mkdir(join(dir, "runs"), { recursive: true });
    await mkdir(join(dir, "locks"), { recursive: true });
    return new FileStore(dir);
  }

  get root(): string {
    return this.#root;
  }

  // Datasets and cases.

  async putDataset(dataset: DatasetRecord, cases?: readonly StoredCase[]): Promise<void> {
    if (cases) {
      checkCases(dataset.id, cases);
      await this.#write(this.#casesPath(dataset.id), cases.map((c) => JSON.stringify(c) + "\n").join(""));
      this.#caseIds.set(dataset.id, new Set(cases.map((c) => c.id)));
    }
    await this.#write(this.#datasetPath(dataset.id), JSON.stringify(dataset));
  }

  async addCases(datasetId: string, cases: readonly StoredCase[]): Promise<number> {
    checkCases(datasetId, cases);
    const ids = await this.#knownCaseIds(datasetId);
    const fresh: StoredCase[] = [];
    for (const c of cases) {
      if (ids.has(c.id)) continue;
      ids.add(c.id);
      fresh.push(c);
    }
    if (fresh.length) {
      try {
        await this.#append(this.#casesPath(datasetId), fresh.map((c) => JSON.stringify(c) + "\n").join(""));
      } catch (error) {
        for (const c of fresh) ids.delete(c.id);
        throw error;
      }
    }
    return fresh.length;
  }

  async getDataset(id: string): Promise<DatasetRecord | undefined> {
    return readJson<DatasetRecord>(this.#datasetPath(id));
  }

  async listDatasets(): Promise<DatasetRecord[]> {
    const names = await readdir(join(this.#root, "datasets"));
    const records = await Promise.all(
      names.filter((n) => n.endsWith(".json")).map((n) => readJson<DatasetRecord>(join(this.#root, "datasets", n))),
    );
    return records.filter((r): r is DatasetRecord => !!r).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async cases(datasetId: string): Promise<StoredCase[]> {
    const cases = await readLines<StoredCase>(this.#casesPath(datasetId));
    return cases.sort(byId);
  }

  async getCase(datasetId: string, caseId: string): Promise<StoredCase | undefined> {
    return (await readLines<StoredCase>(this.#casesPath(datasetId))).find((c) => c.id === caseId);
  }

  async deleteDataset(id: string): Promise<void> {
    await rm(this.#casesPath(id), { force: true });
    await rm(this.#datasetPath(id), { force: true });
    this.#caseIds.delete(id);
  }

  // Images.

  async putImage(bytes: Uint8Array, type?: string): Promise<string> {
    const hex = sha256Hex(bytes);
    const path = join(this.#root, "images", hex);
    if (!existsSync(path)) {
      await this.#write(`${path}.type`, type ?? imageType(bytes));
      await this.#write(path, bytes);
    }
    return `sha256:${hex}`;
  }

  async getImage(hash: string): Promise<ImageRecord | undefined> {
    const hex = imageHex(hash);
    try {
      const [bytes, type] = await Promise.all([
        readFile(join(this.#root, "images", hex)),
        readFile(join(this.#root, "images", `${hex}.type`), "utf8"),
      ]);
      return { hash: `sha256:${hex}`, bytes: new Uint8Array(bytes), type };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async getImages(hashes: readonly string[]): Promise<(ImageRecord | undefined)[]> {
    return Promise.all(hashes.map((hash) => this.getImage(hash)));
  }

  async hasImage(hash: string): Promise<boolean> {
    return existsSync(join(this.#root, "images", imageHex(hash)));
  }

  // Runs.

  async createRun(run: RunRecord): Promise<void> {
    const dir = this.#runDir(run.id);
    if (existsSync(join(dir, "run.json"))) throw new StoreError(`createRun(): a run '${run.id}' already exists`);
    await mkdir(join(dir, "traces"), { recursive: true });
    await this.#write(join(dir, "run.json"), JSON.stringify(run));
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return readJson<RunRecord>(join(this.#runDir(id), "run.json"));
  }

  async listRuns(filter?: RunFilter): Promise<RunRecord[]> {
    const names = await readdir(join(this.#root, "runs"));
    const runs = await Promise.all(names.map((n) => readJson<RunRecord>(join(this.#root, "runs", n, "run.json"))));
    return runs.filter((r): r is RunRecord => !!r && matchesFilter(r, filter)).sort(byNewest);
  }

  async updateRun(
    id: string,
    changes: Partial<Pick<RunRecord, "status" | "finishedAt" | "summary" | "config">>,
  ): Promise<void> {
    const run = await this.getRun(id);
    if (!run) throw new StoreError(`updateRun(): no run '${id}'`);
    await this.#checkWriter(id);
    const dir = this.#runDir(id);
    // A run is finished only once what it holds is on disk: its logs flushed first, then the record.
    const durable = changes.status === "finished";
    if (durable) for (const log of ["items.jsonl", "events.jsonl"]) await flushFile(join(dir, log));
    await this.#write(join(dir, "run.json"), JSON.stringify({ ...run, ...changes }), durable);
  }

  async deleteRun(id: string): Promise<void> {
    await this.#checkWriter(id);
    await rm(this.#runDir(id), { recursive: true, force: true });
    this.#eventCount.delete(id);
    this.#itemIndexes.delete(id);
  }

  async appendItems(runId: string, items: readonly ItemRecord[], progress: Omit<RunProgress, "runId">): Promise<void> {
    await this.#requireRun(runId, "appendItems");
    await this.#checkWriter(runId);
    const known = await this.#knownItemIndexes(runId);
    const seen = new Set<number>();
    for (const item of items) {
      if (item.runId !== runId)
        throw new StoreError(`appendItems(): item ${item.index} belongs to run '${item.runId}', not '${runId}'`);
      if (known.has(item.index) || seen.has(item.index))
        throw new StoreError(
          `appendItems(): item ${item.index} of run '${runId}' is already stored; each item is judged once`,
          {
            items: 0,
          },
        );
      seen.add(item.index);
    }
    const line = JSON.stringify({ items, progress: { ...progress, runId } }) + "\n";
    await this.#append(join(this.#runDir(runId), "items.jsonl"), line);
    for (const index of seen) known.add(index);
  }

  async items(runId: string): Promise<ItemRecord[]> {
    const entries = await readLines<{ items: ItemRecord[] }>(join(this.#runDir(runId), "items.jsonl"));
    return entries.flatMap((e) => e.items).sort((a, b) => a.index - b.index);
  }

  async progress(runId: string): Promise<RunProgress | undefined> {
    const entries = await readLines<{ progress: RunProgress }>(join(this.#runDir(runId), "items.jsonl"));
    return entries.at(-1)?.progress;
  }

  async appendEvents(runId: string, events: readonly EventInput[]): Promise<EventRecord[]> {
    await this.#requireRun(runId, "appendEvents");
    await this.#checkWriter(runId);
    let seq = await this.#knownEventCount(runId);
    const now = new Date().toISOString();
    const records: EventRecord[] = events.map((e) => ({ ...e, runId, seq: seq++, ts: e.ts ?? now }));
    if (records.length) {
      await this.#append(
        join(this.#runDir(runId), "events.jsonl"),
        records.map((r) => JSON.stringify(r) + "\n").join(""),
      );
      this.#eventCount.set(runId, seq);
    }
    return records;
  }

  async events(runId: string, fromSeq = 0): Promise<EventRecord[]> {
    const all = await readLines<EventRecord>(join(this.#runDir(runId), "events.jsonl"));
    return all.filter((e) => e.seq >= fromSeq).sort((a, b) => a.seq - b.seq);
  }

  async putTraces(traces: readonly TraceRecord[]): Promise<void> {
    for (const trace of traces) checkTrace(trace);
    // Every run checked before anything is written, so a refused call keeps nothing.
    for (const runId of new Set(traces.map((t) => t.runId))) {
      await this.#requireRun(runId, "putTraces");
      await this.#checkWriter(runId);
    }
    for (const trace of traces) {
      const name = [trace.caseId, String(trace.repeat), trace.name].map(encodeName).join(".");
      const { data, ...header } = trace;
      const base = join(this.#runDir(trace.runId), "traces", name);
      // Data first, header last: a header on disk means its data is complete.
      await this.#write(`${base}.bin`, arrayBytes(data));
      await this.#write(`${base}.json`, JSON.stringify({ ...header, type: data[Symbol.toStringTag] }));
    }
  }

  async traces(
    runId: string,
    filter: { readonly caseId?: string; readonly name?: string } = {},
  ): Promise<TraceRecord[]> {
    const dir = join(this.#runDir(runId), "traces");
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith(".json")).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const out: TraceRecord[] = [];
    for (const n of names) {
      const stored = await readJson<Omit<TraceRecord, "data"> & { type: string }>(join(dir, n));
      if (!stored) continue;
      if (filter.caseId !== undefined && stored.caseId !== filter.caseId) continue;
      if (filter.name !== undefined && stored.name !== filter.name) continue;
      const { type, ...header } = stored;
      const bytes = await readFile(join(dir, `${n.slice(0, -".json".length)}.bin`));
      out.push({
        ...header,
        data: bytesToArray(type, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
      });
    }
    return out.sort(traceOrder);
  }

  async putScores(scores: readonly ScoreRecord[]): Promise<void> {
    const byRun = new Map<string, ScoreRecord[]>();
    for (const s of scores) byRun.set(s.runId, [...(byRun.get(s.runId) ?? []), s]);
    for (const runId of byRun.keys()) {
      await this.#requireRun(runId, "putScores");
      await this.#checkWriter(runId);
    }
    for (const [runId, list] of byRun) {
      const path = join(this.#runDir(runId), "scores.json");
      const current = (await readJson<Record<string, ScoreRecord>>(path)) ?? {};
      for (const s of list) current[s.name] = s;
      await this.#write(path, JSON.stringify(current));
    }
  }

  async scores(runId: string): Promise<ScoreRecord[]> {
    const current = (await readJson<Record<string, ScoreRecord>>(join(this.#runDir(runId), "scores.json"))) ?? {};
    return Object.values(current).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  // One writer per run.

  async lockRun(runId: string, options: LockOptions = {}): Promise<RunLock> {
    const lock = await FileLock.acquire(this.#lockPath(runId), {
      runId,
      what: `run '${runId}'`,
      ...(options.wait !== undefined && { wait: options.wait }),
      ...(options.signal && { signal: options.signal }),
    });
    this.#locks.set(runId, lock);
    return {
      runId,
      holder: lock.holder,
      lost: lock.lost,
      release: async () => {
        if (this.#locks.get(runId) === lock) this.#locks.delete(runId);
        await lock.release();
      },
    };
  }

  async runLockHolder(runId: string): Promise<string | undefined> {
    return FileLock.holder(this.#lockPath(runId));
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

  async usage(): Promise<StorageUsage> {
    try {
      const fs = await statfs(this.#root);
      return { usage: await directorySize(this.#root), quota: fs.bavail * fs.bsize, persisted: true };
    } catch {
      return { persisted: true };
    }
  }

  async close(): Promise<void> {
    for (const lock of this.#locks.values()) await lock.release();
    this.#locks.clear();
    this.#caseIds.clear();
    this.#eventCount.clear();
    this.#itemIndexes.clear();
  }

  // Internals.

  #datasetPath(id: string) {
    return join(this.#root, "datasets", `${encodeName(id)}.json`);
  }

  #casesPath(id: string) {
    return join(this.#root, "datasets", `${encodeName(id)}.cases.jsonl`);
  }

  #runDir(id: string) {
    return join(this.#root, "runs", encodeName(id));
  }

  #lockPath(runId: string) {
    return join(this.#root, "locks", `${encodeName(runId)}.lock`);
  }

  /** Refuses a write to a run another live process holds the lock of, or whose lock this store lost. */
  async #checkWriter(runId: string) {
    await FileLock.check(this.#lockPath(runId), runId, this.#locks.get(runId));
  }

  async #requireRun(runId: string, what: string) {
    if (!existsSync(join(this.#runDir(runId), "run.json")))
      throw new StoreError(`${what}(): no run '${runId}'; create it with createRun() first`);
  }

  async #knownCaseIds(datasetId: string): Promise<Set<string>> {
    let ids = this.#caseIds.get(datasetId);
    if (!ids) {
      ids = new Set((await readLines<StoredCase>(this.#casesPath(datasetId))).map((c) => c.id));
      this.#caseIds.set(datasetId, ids);
    }
    return ids;
  }

  async #knownItemIndexes(runId: string): Promise<Set<number>> {
    let known = this.#itemIndexes.get(runId);
    if (!known) {
      known = new Set((await this.items(runId)).map((i) => i.index));
      this.#itemIndexes.set(runId, known);
    }
    return known;
  }

  async #knownEventCount(runId: string): Promise<number> {
    let count = this.#eventCount.get(runId);
    if (count === undefined) {
      const events = await this.events(runId);
      count = events.length ? events.at(-1)!.seq + 1 : 0;
      this.#eventCount.set(runId, count);
    }
    return count;
  }

  /** Whole-file write: a temp file beside the target, then rename, so readers see the old or the new file. */
  async #write(path: string, body: string | Uint8Array, durable = false): Promise<void> {
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      if (durable) {
        const handle = await open(temp, "wx");
        try {
          await handle.writeFile(body);
          await handle.sync();
        } finally {
          await handle.close();
        }
      } else await writeFile(temp, body);
      await rename(temp, path);
      if (durable) await flushFile(dirname(path));
    } catch (error) {
      await rm(temp, { force: true });
      throw storageError(error, path);
    }
  }

  /** Appends whole lines, first cutting off a torn tail a killed writer may have left. */
  async #append(path: string, lines: string): Promise<void> {
    try {
      await cutTornTail(path);
      await appendFile(path, lines);
    } catch (error) {
      // A partial append is a torn tail: remove it so the file holds only whole lines again.
      await cutTornTail(path).catch(() => undefined);
      throw storageError(error, path);
    }
  }
}

/** A file or id as a safe single path segment (injective: different ids never share a name). */
function encodeName(id: string): string {
  return encodeURIComponent(id).replace(/[.*!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

async function readJson<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw readError(error, path);
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new StoreError(`${path} is not JSON (${(error as Error).message}); the store file is corrupt`, {}, false, {
      cause: error,
    });
  }
}

function readError(error: unknown, path: string): Error {
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreError(reason.includes(path) ? reason : `cannot read ${path}: ${reason}`, {}, false, { cause: error });
}

/** The whole lines of a JSONL log; a torn last line (no newline) is not data yet. */
async function readLines<T>(path: string): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (isMissing(error)) return [];
    throw readError(error, path);
  }
  const end = text.lastIndexOf("\n");
  if (end < 0) return [];
  const out: T[] = [];
  let n = 0;
  for (const line of text.slice(0, end).split("\n")) {
    n++;
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch (error) {
      // Only the last line can be torn by a crash; a bad line before it is damage the store must not paper over.
      throw new StoreError(
        `${path} line ${n} is not JSON (${(error as Error).message}): the store file is corrupt; ` +
          "restore it from a backup, or delete that line to drop what it held",
        {},
        false,
        { cause: error },
      );
    }
  }
  return out;
}

/** Flushes a file (or a folder's entries) to disk; a missing file, or a platform that cannot, is left as it is. */
async function flushFile(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch {
    return;
  }
  try {
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "EPERM" && code !== "EISDIR") throw storageError(error, path);
  } finally {
    await handle.close();
  }
}

async function cutTornTail(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return;
    // Scan back from the end for the last newline, in small blocks.
    const block = Buffer.alloc(Math.min(size, 65536));
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - block.length);
      const { bytesRead } = await handle.read(block, 0, end - start, start);
      const at = block.subarray(0, bytesRead).lastIndexOf(10);
      if (at >= 0) {
        const keep = start + at + 1;
        if (keep < size) await truncate(path, keep);
        return;
      }
      end = start;
    }
    await truncate(path, 0);
  } finally {
    await handle.close();
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === "ENOENT";
}

function storageError(error: unknown, path: string): Error {
  if (error instanceof StoreError) return error;
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "ENOSPC" || code === "EDQUOT")
    return new StoreError(
      `the disk is full writing ${path}; nothing of this write was kept (earlier writes are intact). Free space and resume.`,
      { items: 0 },
      true,
      { cause: error },
    );
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreError(reason.includes(path) ? reason : `cannot write ${path}: ${reason}`, {}, false, {
    cause: error,
  });
}

async function directorySize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      total += (await stat(join(entry.parentPath, entry.name))).size;
    } catch {
      // Removed while we counted.
    }
  }
  return total;
}

function traceOrder(a: TraceRecord, b: TraceRecord): number {
  if (a.caseId !== b.caseId) return a.caseId < b.caseId ? -1 : 1;
  if (a.repeat !== b.repeat) return a.repeat - b.repeat;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
