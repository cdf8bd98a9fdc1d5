import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { FileStore } from "./files.node.ts";

const child = fileURLToPath(new URL("./resume-child.node.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "evalrx-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function start(total: number, delayMs = 4): ChildProcess {
  // One process (node with the tsx loader, not the tsx CLI, which would fork a child the kill would miss).
  return spawn(process.execPath, ["--import", "tsx", child, dir, String(total), String(delayMs)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
}

function exited(process: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => process.on("exit", (code) => resolve(code)));
}

it("a Node run SIGKILLed mid-run resumes from its first unjudged item; every case is judged exactly once; a second process is refused", async () => {
  const total = 120;
  const store = await FileStore.open(dir);
  for (const killAfter of [15, 60]) {
    const run = start(total);
    const gone = exited(run);
    // Wait until it has stored some items, then kill it without warning.
    for (;;) {
      const progress = await store.progress("resumable");
      if ((progress?.done ?? 0) >= killAfter) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // A second writer on the same run is refused up front, naming the live holder, and judges nothing.
    // The holder waits (a pause file) until the rival has been answered, however slowly the rival starts.
    writeFileSync(join(dir, "pause"), "");
    const rival = start(total);
    let rivalErr = "";
    rival.stderr!.on("data", (chunk) => (rivalErr += chunk));
    expect(await exited(rival)).not.toBe(0);
    expect(rivalErr).toMatch(new RegExp(`run 'resumable' already has a writer: process ${run.pid} on host `));
    run.kill("SIGKILL");
    rmSync(join(dir, "pause"));
    await gone;
    // The killed holder's lock is left behind; its pid is dead, so the next process takes it over.
    expect(await store.runLockHolder("resumable")).toBeUndefined();
    const stored = await store.items("resumable");
    expect(stored.length).toBeLessThan(total);
    expect((await store.getRun("resumable"))!.status).toBe("running");
  }
  const last = start(total);
  let stderr = "";
  last.stderr!.on("data", (chunk) => (stderr += chunk));
  expect(await exited(last)).toBe(0);
  expect(stderr).toBe("");

  const reopened = await FileStore.open(dir);
  const items = await reopened.items("resumable");
  expect(items.map((i) => i.index)).toEqual(Array.from({ length: total }, (_, i) => i));
  expect(new Set(items.map((i) => i.caseId)).size).toBe(total);
  expect(await reopened.progress("resumable")).toMatchObject({ done: total, total });
  expect((await reopened.getRun("resumable"))!.status).toBe("finished");

  // Each restart began at the first unjudged item, never at 0 again: no stored item was judged twice.
  const starts = readFileSync(join(dir, "starts.log"), "utf8")
    .trim()
    .split("\n")
    .map((l) => Number(l.split(" ")[1]));
  expect(starts[0]).toBe(0);
  expect(starts[1]).toBeGreaterThanOrEqual(15);
  expect(starts[2]).toBeGreaterThanOrEqual(60);
  const judged = readFileSync(join(dir, "judgements.log"), "utf8")
    .trim()
    .split("\n")
    .map((l) => Number(l.split(" ")[1]));
  // A judgement interrupted before it was stored is redone (at most one per kill); nothing stored is redone.
  expect(judged.length).toBeLessThanOrEqual(total + 2);
  expect(new Set(judged).size).toBe(total);
});
