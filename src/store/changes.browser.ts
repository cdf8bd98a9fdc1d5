/**
 * Who changed what in the page's store: every realm that writes to IndexedDB
 * (a tab, the model worker running an eval, the data worker importing a file)
 * announces it on one `BroadcastChannel` per database, and every tab's lists
 * refresh. The store itself stays a plain `Store`; the feed sits beside it.
 */

/** One change: which kind of record, and which one when known. */
export interface StoreChange {
  readonly kind: "datasets" | "runs";
  readonly id?: string;
}

const channels = new Map<string, BroadcastChannel>();

function channel(db: string): BroadcastChannel {
  let c = channels.get(db);
  if (!c) {
    c = new BroadcastChannel(`evalrx-store:${db}`);
    channels.set(db, c);
  }
  return c;
}

/**
 * Tells every other realm of this origin (tabs and workers) that `db` changed.
 * A realm does not hear its own announcements: refresh locally as well.
 *
 * @example announceChange("evalrx", { kind: "runs", id: run.id })
 */
export function announceChange(db: string, change: StoreChange): void {
  channel(db).postMessage(change);
}

/**
 * Calls `listener` for every change another realm announces for `db`; returns
 * the function that stops listening.
 *
 * @example const stop = onStoreChange("evalrx", (c) => c.kind === "runs" && refreshRuns())
 */
export function onStoreChange(db: string, listener: (change: StoreChange) => void): () => void {
  const c = new BroadcastChannel(`evalrx-store:${db}`);
  c.onmessage = (event: MessageEvent<StoreChange>) => listener(event.data);
  return () => c.close();
}
