import { announceChange, onStoreChange, type StoreChange } from "../../store/changes.browser.ts";
import { IdbStore, requestPersistentStorage } from "../../store/idb.browser.ts";
import type { RunHead } from "../../store/heads.ts";
import type { DatasetRecord, StorageUsage } from "../../store/types.ts";
import { errorText } from "./errors.ts";

/**
 * The page's one IndexedDB connection and the lists every screen shows
 * (datasets, runs, usage), kept fresh: a write here, in another tab or in a
 * worker announces itself on the change feed and the lists are read again
 * (coalesced, so a burst of writes costs one read).
 */
export class StoreService {
  state = $state<"opening" | "open" | "failed">("opening");
  failure = $state<string | undefined>();
  datasets = $state.raw<readonly DatasetRecord[]>([]);
  /** Light copies of the runs (no per-case config), newest first. */
  runs = $state.raw<readonly RunHead[]>([]);
  usage = $state.raw<StorageUsage | undefined>();
  /** Whether the browser granted persistent storage (runs are then never evicted under pressure). */
  persisted = $state<boolean | undefined>();
  /** Bumped on every change, so pages showing one record can re-read it. */
  revision = $state(0);
  readonly db: string;
  readonly ready: Promise<IdbStore>;
  #pending: Promise<void> | undefined;
  #stop: (() => void) | undefined;

  constructor(db = "evalrx") {
    this.db = db;
    this.ready = IdbStore.open(db);
    this.ready.then(
      async () => {
        this.state = "open";
        this.#stop = onStoreChange(db, () => void this.refresh());
        // Ask before the first write: without persistence the browser may evict runs under storage pressure.
        this.persisted = await requestPersistentStorage().catch(() => false);
        await this.refresh();
      },
      (error: unknown) => {
        this.state = "failed";
        this.failure = `IndexedDB could not be opened: ${errorText(error)}. Private windows and some browser settings block it; runs cannot be kept.`;
      },
    );
  }

  /** Reads the lists again (one read however many changes arrived meanwhile). */
  refresh(): Promise<void> {
    this.#pending ??= (async () => {
      await Promise.resolve();
      this.#pending = undefined;
      const store = await this.ready;
      const [datasets, runs, usage] = await Promise.all([store.listDatasets(), store.runHeads(), store.usage()]);
      this.datasets = datasets;
      this.runs = runs;
      this.usage = usage;
      this.revision++;
    })().catch((error: unknown) => {
      this.failure = `reading the store failed: ${errorText(error)}`;
    });
    return this.#pending ?? Promise.resolve();
  }

  /** Records a change made in this realm: every other tab and worker hears of it, and the lists are read again. */
  changed(change: StoreChange): Promise<void> {
    announceChange(this.db, change);
    return this.refresh();
  }

  dispose(): void {
    this.#stop?.();
    void this.ready.then((s) => s.close()).catch(() => undefined);
  }
}
