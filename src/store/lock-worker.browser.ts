// A second writer in another realm (a dedicated worker: its own client of the origin's Web Locks, as another
// tab is), driven by idb.browser.test.ts: it opens the same database and takes, holds or lets go of a run's lock.
import { IdbStore } from "./idb.browser.ts";
import type { RunLock } from "./types.ts";

let store: IdbStore | undefined;
let lock: RunLock | undefined;

self.onmessage = async (event: MessageEvent<{ db: string; runId: string; action: "lock" | "release" | "holder" }>) => {
  const { db, runId, action } = event.data;
  try {
    store ??= await IdbStore.open(db);
    if (action === "lock") {
      lock = await store.lockRun(runId);
      postMessage({ ok: true, holder: lock.holder });
    } else if (action === "release") {
      await lock?.release();
      lock = undefined;
      postMessage({ ok: true });
    } else postMessage({ ok: true, holder: await store.runLockHolder(runId) });
  } catch (error) {
    postMessage({ ok: false, name: (error as Error).name, message: (error as Error).message });
  }
};
