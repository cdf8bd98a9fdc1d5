import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
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
