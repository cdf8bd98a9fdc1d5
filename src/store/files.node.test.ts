import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { item, run, storeContract } from "./contract.ts";
import { StoreError } from "./errors.ts";
import { FileStore } from "./files.node.ts";

const dirs: string[] = [];
const roots = new WeakMap<object, string>();
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

storeContract("file store", {
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-store-"));
    dirs.push(dir);
    const store = await FileStore.open(dir);
    roots.set(store, dir);
    return store;
  },
  async reopen(store) {
    await store.close();
    return FileStore.open(roots.get(store)!);
  },
  async another(store) {
    const second = await FileStore.open(roots.get(store)!);
    roots.set(second, roots.get(store)!);
    return second;
  },
});

describe("file store on disk", () => {
  it("a torn last line (a writer killed mid-append) is ignored, then cut off by the next append", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-store-"));
    dirs.push(dir);
    const store = await FileStore.open(dir);
    await store.createRun(run("r"));
    await store.appendItems("r", [item("r", 0)], { done: 1, total: 3, updatedAt: "t" });
    const log = join(dir, "runs", "r", "items.jsonl");
    writeFileSync(log, readFileSync(log, "utf8") + '{"items":[{"runId":"r","index":1', { flag: "w" });
    const reopened = await FileStore.open(dir);
    expect((await reopened.items("r")).map((i) => i.index)).toEqual([0]);
    expect((await reopened.progress("r"))!.done).toBe(1);
    await reopened.appendItems("r", [item("r", 1)], { done: 2, total: 3, updatedAt: "t" });
    expect((await reopened.items("r")).map((i) => i.index)).toEqual([0, 1]);
    expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toHaveLength(2);
  });

  // Linux's /dev/full fails every write with ENOSPC, as a full disk does.
  it.skipIf(!existsSync("/dev/full"))(
    "a full disk is surfaced as a StoreError (quota) that says nothing of the write was kept",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "evalrx-store-"));
      dirs.push(dir);
      const store = await FileStore.open(dir);
      await store.createRun(run("r"));
      await store.appendItems("r", [item("r", 0)], { done: 1, total: 3, updatedAt: "t" });
      symlinkSync("/dev/full", join(dir, "runs", "r", "items.jsonl.full"));
      renameSync(join(dir, "runs", "r", "items.jsonl"), join(dir, "runs", "r", "items.saved"));
      renameSync(join(dir, "runs", "r", "items.jsonl.full"), join(dir, "runs", "r", "items.jsonl"));
      const error = await store.appendItems("r", [item("r", 1)], { done: 2, total: 3, updatedAt: "t" }).catch((e) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ quota: true, kept: { items: 0 } });
      expect(error.message).toMatch(/the disk is full .*nothing of this write was kept/);
      // Space comes back: the earlier item is intact and the run continues with the refused one.
      rmSync(join(dir, "runs", "r", "items.jsonl"));
      renameSync(join(dir, "runs", "r", "items.saved"), join(dir, "runs", "r", "items.jsonl"));
      await store.appendItems("r", [item("r", 1)], { done: 2, total: 3, updatedAt: "t" });
      expect((await store.items("r")).map((i) => i.index)).toEqual([0, 1]);
    },
  );

  it("leaves no temp files behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-store-"));
    dirs.push(dir);
    const store = await FileStore.open(dir);
    await store.createRun(run("r"));
    await store.putScores([{ runId: "r", name: "a", value: 1 }]);
    const all = readdirSync(dir, { recursive: true }).map(String);
    expect(all.filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(all).toContain(join("runs", "r", "scores.json"));
    // usage() counts what the directory holds.
    expect((await store.usage()).usage).toBeGreaterThan(0);
  });
});

describe("file store run locks (pid + host + heartbeat)", () => {
  const lockFile = (dir: string, runId: string) => join(dir, "locks", `${runId}.lock`);
  const fake = (dir: string, info: Record<string, unknown> | string, ageMs = 0) => {
    const path = lockFile(dir, "r");
    writeFileSync(path, typeof info === "string" ? info : JSON.stringify(info));
    const when = new Date(Date.now() - ageMs);
    utimesSync(path, when, when);
  };
  const fresh = async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-lock-"));
    dirs.push(dir);
    return { dir, store: await FileStore.open(dir) };
  };

  it("a dead process's lock is taken over at once; a live one's is refused naming pid and host", async () => {
    const { dir, store } = await fresh();
    const gone = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid!;
    fake(dir, { pid: gone, host: hostname(), token: "t-dead", since: "2026-01-01T00:00:00.000Z" });
    expect(await store.runLockHolder("r")).toBeUndefined();
    const lock = await store.lockRun("r");
    expect(JSON.parse(readFileSync(lockFile(dir, "r"), "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    await lock.release();
    expect(existsSync(lockFile(dir, "r"))).toBe(false);

    fake(dir, { pid: process.ppid, host: hostname(), token: "t-live", since: "2026-01-01T00:00:00.000Z" });
    await expect(store.lockRun("r")).rejects.toThrow(
      new RegExp(`^run 'r' already has a writer: process ${process.ppid} on host ${hostname()}, since 2026-`),
    );
    // Its heartbeat stopped long ago (a reused pid, a hung machine): taken over.
    fake(dir, { pid: process.ppid, host: hostname(), token: "t-stale", since: "2026-01-01T00:00:00.000Z" }, 60_000);
    await (await store.lockRun("r")).release();
  });

  it("another host's lock is judged by its heartbeat alone; a half-written lock file by its age", async () => {
    const { dir, store } = await fresh();
    fake(dir, { pid: 1, host: "elsewhere", token: "t", since: "2026-01-01T00:00:00.000Z", what: "run 'r'" });
    expect(await store.runLockHolder("r")).toMatch(/^process 1 on host elsewhere, writing run 'r', since/);
    await expect(store.lockRun("r")).rejects.toThrow(/already has a writer: process 1 on host elsewhere/);
    fake(dir, { pid: 1, host: "elsewhere", token: "t", since: "2026-01-01T00:00:00.000Z" }, 60_000);
    await (await store.lockRun("r")).release();
    writeFileSync(lockFile(dir, "r"), "");
    await expect(store.lockRun("r")).rejects.toThrow(/a writer that is starting/);
    fake(dir, "{", 10_000);
    await (await store.lockRun("r")).release();
  });

  it("a holder whose lock was taken from it loses it: its writes are refused and `lost` aborts", async () => {
    const { dir, store } = await fresh();
    const lock = await store.lockRun("r");
    await store.createRun(run("r"));
    await store.appendItems("r", [item("r", 0)], { done: 1, total: 3, updatedAt: "t" });
    // Another host judged this process dead and took the run over.
    fake(dir, { pid: 1, host: "elsewhere", token: "other", since: "2026-01-01T00:00:00.000Z" });
    await expect(store.appendItems("r", [item("r", 1)], { done: 2, total: 3, updatedAt: "t" })).rejects.toThrow(
      /run 'r': this writer lost its lock \(now held by process 1 on host elsewhere/,
    );
    expect(lock.lost.aborted).toBe(true);
    expect((await store.items("r")).map((i) => i.index)).toEqual([0]);
    await lock.release(); // not ours any more: the other holder's file stays
    expect(JSON.parse(readFileSync(lockFile(dir, "r"), "utf8")).token).toBe("other");
  });

  it("the heartbeat keeps the lock file's mtime fresh while held", async () => {
    const { dir, store } = await fresh();
    const lock = await store.lockRun("r");
    const old = new Date(Date.now() - 20_000);
    utimesSync(lockFile(dir, "r"), old, old);
    const deadline = Date.now() + 5_000;
    while (statSync(lockFile(dir, "r")).mtimeMs < Date.now() - 10_000 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(statSync(lockFile(dir, "r")).mtimeMs).toBeGreaterThan(Date.now() - 10_000);
    await lock.release();
  });
});

describe("file store errors name their file", () => {
  it("a corrupted line in the middle of items.jsonl is refused with the file and line, never skipped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-store-"));
    dirs.push(dir);
    const store = await FileStore.open(dir);
    await store.createRun(run("r"));
    for (const i of [0, 1, 2]) await store.appendItems("r", [item("r", i)], { done: i + 1, total: 3, updatedAt: "t" });
    const log = join(dir, "runs", "r", "items.jsonl");
    const lines = readFileSync(log, "utf8").split("\n");
    lines[1] = lines[1]!.slice(0, 30) + "#" + lines[1]!.slice(31);
    writeFileSync(log, lines.join("\n"));
    const reopened = await FileStore.open(dir);
    await expect(reopened.items("r")).rejects.toThrow(
      new RegExp(
        `^${log.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} line 2 is not JSON \\(.*\\): the store file is corrupt`,
      ),
    );
    writeFileSync(join(dir, "runs", "r", "run.json"), "{not json");
    await expect(reopened.getRun("r")).rejects.toThrow(/run\.json is not JSON .*the store file is corrupt/);
  });
});
