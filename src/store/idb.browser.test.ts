import { afterAll } from "vitest";
import { storeContract } from "./contract.ts";
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
