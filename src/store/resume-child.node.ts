// A run that judges `total` items into the file store at `dir`, resuming where a previous process stopped.
// Spawned (and SIGKILLed mid-run) by resume.node.test.ts. Each judgement is logged to judgements.log
// *before* it is stored, so the test can see which items were judged by which process. It holds the run's
// writer lock throughout, as a real runner does: a second process started meanwhile is refused (exit 1).
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { FileStore } from "./files.node.ts";
import { resumePoint } from "./resume.ts";

const [dir, totalText, delayText] = process.argv.slice(2);
const total = Number(totalText);
const delay = Number(delayText ?? 5);
const store = await FileStore.open(dir!);
const lock = await store.lockRun("resumable");
if (!(await store.getRun("resumable"))) {
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
}
const { next, done } = await resumePoint(store, "resumable", total);
appendFileSync(join(dir!, "starts.log"), `${process.pid} ${next}\n`);
let count = done.size;
for (let index = next; index < total; index++) {
  if (done.has(index)) continue;
  await new Promise((resolve) => setTimeout(resolve, delay));
  // The test holds the run here (a "pause" file) while it starts a rival, however slowly the rival starts.
  while (existsSync(join(dir!, "pause"))) await new Promise((resolve) => setTimeout(resolve, 5));
  const output = `answer-${index}`;
  appendFileSync(join(dir!, "judgements.log"), `${process.pid} ${index}\n`);
  count++;
  await store.appendItems(
    "resumable",
    [{ runId: "resumable", caseId: `c${index}`, repeat: 0, index, output, passed: true, checks: [], latencyMs: delay }],
    { done: count, total, updatedAt: new Date().toISOString() },
  );
}
await store.updateRun("resumable", { status: "finished", finishedAt: new Date().toISOString() });
await lock.release();
