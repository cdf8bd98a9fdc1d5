import type { Store } from "./types.ts";

/**
 * Where does an interrupted run pick up? Reads the items already stored and
 * returns the first index in `[0, total)` that has none, and the set of
 * those stored. A runner judges `index` onwards, skipping any in `done`, and
 * records each judgement with `appendItems` (items and progress together),
 * so every item is judged exactly once however often the run is interrupted.
 *
 * @example const { next, done } = await resumePoint(store, run.id, plan.length)
 */
export async function resumePoint(
  store: Store,
  runId: string,
  total: number,
): Promise<{ next: number; done: ReadonlySet<number> }> {
  const done = new Set((await store.items(runId)).map((item) => item.index));
  let next = 0;
  while (next < total && done.has(next)) next++;
  return { next, done };
}
