// The page side of resume.e2e.test.ts: judges `total` items into IndexedDB, one transaction per item
// (items + progress together), resuming where a closed tab stopped. Each judgement and each start is
// logged to localStorage before the item is stored, so the test sees what every tab did. The tab holds the
// run's writer lock (a Web Lock) throughout: a second tab opened meanwhile is refused (state.error).
import { IdbStore } from "./idb.browser.ts";
import { resumePoint } from "./resume.ts";

interface PageState {
  started: number;
  done: number;
  finished: boolean;
  error?: string;
  /** Once finished: the stored items' indexes and the progress marker, as read back from IndexedDB. */
  indexes?: number[];
  progress?: unknown;
}

const params = new URLSearchParams(location.search);
const db = params.get("db") ?? "evalrx-resume";
const total = Number(params.get("total") ?? 100);
const delay = Number(params.get("delay") ?? 5);
const state: PageState = { started: -1, done: 0, finished: false };
(window as unknown as { __evalrx: PageState }).__evalrx = state;

function log(key: string, value: number) {
  const list = JSON.parse(localStorage.getItem(`${db}:${key}`) ?? "[]") as number[];
  list.push(value);
  localStorage.setItem(`${db}:${key}`, JSON.stringify(list));
}

async function main() {
  const store = await IdbStore.open(db);
  const lock = await store.lockRun("resumable");
  if (!(await store.getRun("resumable")))
    await store.createRun({
      id: "resumable",
      kind: "eval",
      dataset: "ds",
      model: "echo",
      fingerprint: "fp",
      status: "running",
      startedAt: new Date().toISOString(),
      config: { total },
    });
  const { next, done } = await resumePoint(store, "resumable", total);
  state.started = next;
  state.done = done.size;
  log("starts", next);
  for (let index = next; index < total; index++) {
    if (done.has(index)) continue;
    await new Promise((resolve) => setTimeout(resolve, delay));
    // The test holds the run here while it opens a rival tab, however slowly that tab loads.
    while (localStorage.getItem(`${db}:pause`)) await new Promise((resolve) => setTimeout(resolve, 5));
    log("judged", index);
    await store.appendItems(
      "resumable",
      [
        {
          runId: "resumable",
          caseId: `c${index}`,
          repeat: 0,
          index,
          output: `answer-${index}`,
          passed: true,
          checks: [],
          latencyMs: delay,
        },
      ],
      { done: state.done + 1, total, updatedAt: new Date().toISOString() },
    );
    state.done++;
  }
  await store.updateRun("resumable", { status: "finished", finishedAt: new Date().toISOString() });
  await lock.release();
  const items = await store.items("resumable");
  state.indexes = items.map((i) => i.index);
  state.progress = await store.progress("resumable");
  document.getElementById("state")!.textContent = `finished ${items.length}`;
  state.finished = true;
}

main().catch((error: unknown) => {
  state.error = error instanceof Error ? error.message : String(error);
});
