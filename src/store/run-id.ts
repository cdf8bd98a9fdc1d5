import type { Store } from "./types.ts";

/**
 * What id does a new run of `evalKey` get? The eval's name and its start time
 * (UTC, to the second), made unique in `store` with `-2`, `-3`, … — the one
 * naming the page, its worker and the companion share.
 *
 * @example await newRunId(store, "pope-yesNo", new Date("2026-12-01T16:11:18Z")) // "pope-yesNo-20261201T161118Z"
 */
export async function newRunId(store: Pick<Store, "getRun">, evalKey: string, now = new Date()): Promise<string> {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const base = `${evalKey.replace(/[^\w.-]+/g, "-")}-${stamp}`;
  let id = base;
  for (let k = 2; await store.getRun(id); k++) id = `${base}-${k}`;
  return id;
}
