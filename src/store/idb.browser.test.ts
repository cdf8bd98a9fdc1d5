import { afterAll, describe, expect, it } from "vitest";
import { dataset, storeContract, storedCase } from "./contract.ts";
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
    await store.close();
  });
});
