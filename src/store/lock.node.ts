import { randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { link, open, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { RunLockedError } from "./errors.ts";

/** How often a holder touches its lock file. */
export const HEARTBEAT_MS = 2_000;
/** A lock whose heartbeat is older than this is taken over even when its pid seems alive (a reused pid, a hung host). */
export const STALE_MS = 30_000;
/** A lock file that cannot be read (a writer killed between creating and filling it) is abandoned after this. */
const UNREADABLE_MS = 5_000;
const POLL_MS = 200;

/** What a lock file holds. Its mtime is the heartbeat. */
interface LockInfo {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
  readonly since: string;
  /** What the holder is doing (e.g. `run 'pope-…'`), for messages. */
  readonly what?: string;
}

type Seen = { readonly info: LockInfo | undefined; readonly ageMs: number } | undefined;

/** Locks this process holds, by path → token, released (if still ours) when the process exits normally. */
const heldHere = new Map<string, string>();
let exitHook = false;

function hookExit() {
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const [path, token] of heldHere) {
      try {
        if ((JSON.parse(readFileSync(path, "utf8")) as LockInfo).token === token) unlinkSync(path);
      } catch {
        // Gone already, or someone else's now.
      }
    }
  });
}

/**
 * One writer at a time, across processes (and hosts sharing a disk): a lock
 * file holding the holder's pid, host and a token, created atomically (a
 * hard link of a complete temp file, so it is never seen half-written), its
 * mtime refreshed every {@link HEARTBEAT_MS} as a heartbeat. A lock whose
 * holder is dead (its pid is gone on this host, or its heartbeat is older than
 * {@link STALE_MS}) is taken over by moving it aside first, so two processes
 * reaping it at once cannot both win. A holder that finds its file gone or
 * replaced has lost the lock: `lost` aborts and `check` refuses its writes.
 *
 * @example const lock = await FileLock.acquire(".evalrx/locks/run-1.lock", { what: "run 'run-1'" }); …; await lock.release()
 */
export class FileLock {
  readonly path: string;
  readonly runId: string;
  readonly token: string;
  readonly holder: string;
  readonly #lost = new AbortController();
  #timer: ReturnType<typeof setInterval> | undefined;
  #released = false;

  private constructor(path: string, runId: string, token: string, holder: string) {
    this.path = path;
    this.runId = runId;
    this.token = token;
    this.holder = holder;
    this.#timer = setInterval(() => void this.#beat(), HEARTBEAT_MS);
    this.#timer.unref();
    heldHere.set(path, token);
    hookExit();
  }

  /** Aborted when another process took the lock over (this one was judged dead). */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /**
   * Takes the lock at `path`, or throws a `RunLockedError` naming its live
   * holder (`wait: true` polls until it is free or `signal` aborts).
   */
  static async acquire(
    path: string,
    options: {
      readonly runId: string;
      readonly what?: string;
      /** What the refusal names (default `run '<runId>'`), e.g. `the output folder out/`. */
      readonly subject?: string;
      readonly wait?: boolean;
      readonly signal?: AbortSignal;
    },
  ): Promise<FileLock> {
    const token = randomBytes(9).toString("hex");
    const info: LockInfo = {
      pid: process.pid,
      host: hostname(),
      token,
      since: new Date().toISOString(),
      ...(options.what !== undefined && { what: options.what }),
    };
    for (;;) {
      options.signal?.throwIfAborted();
      if (await create(path, info)) return new FileLock(path, options.runId, token, describe(info, 0));
      const seen = await read(path);
      if (seen === undefined) continue; // released between our try and our look: try again
      if (!isLive(seen)) {
        await reap(path, seen.info);
        continue;
      }
      if (!options.wait) {
        const holder = describe(seen.info, seen.ageMs);
        throw new RunLockedError(
          options.runId,
          holder,
          options.subject &&
            `${options.subject} already has a writer: ${holder}. One writer at a time: wait for it to finish, or stop it.`,
        );
      }
      await sleep(POLL_MS, options.signal);
    }
  }

  /** Who holds the lock at `path`, or undefined when nobody live does. */
  static async holder(path: string): Promise<string | undefined> {
    const seen = await read(path);
    return seen && isLive(seen) ? describe(seen.info, seen.ageMs) : undefined;
  }

  /**
   * Refuses a write to a locked resource by anyone but a live holder:
   * throws a `RunLockedError` when `held` (the writer's own lock, if any) is
   * not the lock on disk and that lock's holder is alive. No lock (or a dead
   * holder's) lets an unlocked writer through.
   */
  static async check(path: string, runId: string, held: FileLock | undefined): Promise<void> {
    const seen = await read(path);
    if (held && !held.#released) {
      if (seen?.info?.token === held.token) return;
      held.#lose();
      throw new RunLockedError(
        runId,
        seen && isLive(seen) ? describe(seen.info, seen.ageMs) : "nobody (its lock file is gone)",
        `run '${runId}': this writer lost its lock (${seen && isLive(seen) ? `now held by ${describe(seen.info, seen.ageMs)}` : "its lock file is gone"}); nothing of this write was kept. Stop and resume the run.`,
      );
    }
    if (seen && isLive(seen)) throw new RunLockedError(runId, describe(seen.info, seen.ageMs));
  }

  /** Lets go: stops the heartbeat and removes the file if it is still this lock's. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#timer);
    heldHere.delete(this.path);
    const seen = await read(this.path).catch(() => undefined);
    if (seen?.info?.token === this.token) await unlink(this.path).catch(() => undefined);
  }

  #lose() {
    if (this.#lost.signal.aborted) return;
    clearInterval(this.#timer);
    heldHere.delete(this.path);
    this.#lost.abort(
      new RunLockedError(
        this.runId,
        "another process",
        `run '${this.runId}': this writer lost its lock to another process`,
      ),
    );
  }

  async #beat() {
    if (this.#released) return;
    try {
      const seen = await read(this.path);
      if (seen?.info?.token !== this.token) return this.#lose();
      const now = new Date();
      await utimes(this.path, now, now);
    } catch {
      // A transient error (a full disk does not stop utimes); the next beat tries again.
    }
  }
}

/** Creates the lock file atomically with its whole content; false when one is there already. */
async function create(path: string, info: LockInfo): Promise<boolean> {
  const temp = `${path}.${info.token}.tmp`;
  const body = JSON.stringify(info) + "\n";
  await writeFile(temp, body);
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
    // A filesystem without hard links: exclusive create, then fill (a reader may briefly see it empty).
    let handle;
    try {
      handle = await open(path, "wx");
    } catch (inner) {
      if ((inner as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw inner;
    }
    try {
      await handle.writeFile(body);
    } finally {
      await handle.close();
    }
    return true;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** The lock file's content and heartbeat age; `info` undefined when it is unreadable; undefined when there is none. */
async function read(path: string): Promise<Seen> {
  let text: string;
  let mtimeMs: number;
  try {
    [text, { mtimeMs }] = await Promise.all([readFile(path, "utf8"), stat(path)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const ageMs = Math.max(0, Date.now() - mtimeMs);
  try {
    const info = JSON.parse(text) as LockInfo;
    if (typeof info.pid === "number" && typeof info.token === "string" && typeof info.host === "string")
      return { info, ageMs };
  } catch {
    // torn or empty
  }
  return { info: undefined, ageMs };
}

function isLive(seen: NonNullable<Seen>): boolean {
  if (!seen.info) return seen.ageMs < UNREADABLE_MS;
  if (seen.ageMs > STALE_MS) return false;
  return seen.info.host !== hostname() || pidAlive(seen.info.pid);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes a dead holder's lock away: moves it aside under a name of our own
 * (only one process's rename of it can succeed), then checks that what was
 * moved is the lock judged dead; a live lock moved by a lost race is put back.
 */
async function reap(path: string, dead: LockInfo | undefined): Promise<void> {
  const aside = `${path}.reaped-${randomBytes(6).toString("hex")}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = await read(aside);
  if (moved?.info && moved.info.token !== dead?.token) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

function describe(info: LockInfo | undefined, ageMs: number): string {
  if (!info) return "a writer that is starting (its lock file is not written yet)";
  const who =
    info.pid === process.pid && info.host === hostname()
      ? `this process (pid ${info.pid})`
      : `process ${info.pid} on host ${info.host}`;
  return `${who}${info.what ? `, writing ${info.what}` : ""}, since ${info.since}, heartbeat ${(ageMs / 1000).toFixed(1)} s ago`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });
}
