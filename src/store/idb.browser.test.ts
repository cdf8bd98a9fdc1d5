import { afterAll, describe, expect, it } from "vitest";
import { dataset, item, run, storeContract, storedCase } from "./contract.ts";
import { IdbStore } from "./idb.browser.ts";

const names: string[] = [];
let counter = 0;
afterAll(async () => {
  for (const name of names) await IdbStore.destroy(name);
});

storeContract("IndexedDB (real Chromium)", {
  async fresh() {
    const name = `evalrx-contract-${Date.now()}-${counter++}`;
    names.push(name);
    return IdbStore.open(name);
  },
  async reopen(store) {
    await store.close();
    return IdbStore.open((store as IdbStore).name);
  },
  async another(store) {
    return IdbStore.open((store as IdbStore).name);
  },
});

describe("IndexedDB store across connections (two tabs)", () => {
  it("a connection whose cached case ids are stale re-reads them before adding", async () => {
    const name = `evalrx-two-tabs-${Date.now()}`;
    names.push(name);
    const a = await IdbStore.open(name);
    const b = await IdbStore.open(name);
    await a.putDataset(dataset("ds", 0), []);
    expect(await a.addCases("ds", [storedCase("ds", "x")])).toBe(1);
    expect(await b.addCases("ds", [storedCase("ds", "x"), storedCase("ds", "y")])).toBe(1);
    expect(await a.addCases("ds", [storedCase("ds", "y"), storedCase("ds", "z")])).toBe(1);
    expect((await b.cases("ds")).map((c) => c.id)).toEqual(["x", "y", "z"]);
    await a.close();
    await b.close();
  });

  it("many cases span pages and are all found", async () => {
    const name = `evalrx-pages-${Date.now()}`;
    names.push(name);
    const store = await IdbStore.open(name);
    const many = Array.from({ length: 2500 }, (_, i) => storedCase("ds", `c${String(i).padStart(4, "0")}`));
    await store.putDataset(dataset("ds", 2500), many.slice(0, 1200));
    expect(await store.addCases("ds", many)).toBe(1300);
    expect((await store.cases("ds")).map((c) => c.id)).toEqual(many.map((c) => c.id));
    expect(await store.getCase("ds", "c2499")).toEqual(many[2499]);
    expect(await store.getCase("ds", "c9999")).toBeUndefined();
    // Pages in the order cases were added: 1200 from putDataset (a full page and 200), then the 1300 new ones.
    const pages = [];
    for (let p = 0, page; (page = await store.casePage("ds", p)); p++) pages.push(page.map((c) => c.id));
    expect(pages.map((p) => p.length)).toEqual([1000, 200, 1000, 300]);
    expect(pages.flat()).toEqual(many.map((c) => c.id));
    expect(await store.casePage("other", 0)).toBeUndefined();
    await store.close();
  });
});

describe("one writer per run across realms (a worker is another client of the Web Locks, as another tab is)", () => {
  type Reply = { ok: boolean; holder?: string; name?: string; message?: string };
  it("a worker is refused while this page holds the run, and holds it once the page lets go", async () => {
    const name = `evalrx-lock-${Date.now()}`;
    names.push(name);
    const worker = new Worker(new URL("./lock-worker.browser.ts", import.meta.url), { type: "module" });
    const ask = (action: "lock" | "release" | "holder") =>
      new Promise<Reply>((resolve) => {
        worker.addEventListener("message", (e: MessageEvent<Reply>) => resolve(e.data), { once: true });
        worker.postMessage({ db: name, runId: "r", action });
      });
    const page = await IdbStore.open(name);
    try {
      const lock = await page.lockRun("r");
      expect(lock.holder).toBe("this tab");
      expect(await ask("lock")).toMatchObject({
        ok: false,
        name: "RunLockedError",
        message: expect.stringMatching(/^run 'r' already has a writer: another tab or worker of this page\./),
      });
      expect(await ask("holder")).toEqual({ ok: true, holder: "another tab or worker of this page" });
      await lock.release();
      expect(await ask("lock")).toEqual({ ok: true, holder: "this worker" });
      expect(await page.runLockHolder("r")).toBe("another tab or worker of this page");
      await page.createRun(run("r"));
      await expect(page.appendItems("r", [item("r", 0)], { done: 1, total: 1, updatedAt: "t" })).rejects.toThrow(
        /already has a writer: another tab or worker/,
      );
      await expect(page.lockRun("r")).rejects.toThrow(/already has a writer/);
      // A worker that goes away (a closed tab) takes its lock with it.
      worker.terminate();
      const deadline = Date.now() + 10_000;
      while ((await page.runLockHolder("r")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await page.runLockHolder("r")).toBeUndefined();
      await (await page.lockRun("r")).release();
    } finally {
      worker.terminate();
      await page.close();
    }
  });
});
