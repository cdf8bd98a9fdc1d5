/**
 * The fault-injection harness shared by `faults.test.ts` (a short seeded
 * slice) and `npm run bench:faults` (the long sweep): it runs the real
 * `evalrx` binary, kills it with SIGKILL at random or aimed moments, starts a
 * second writer beside it, fills its disk, resumes it, and compares what it
 * stored with an uninterrupted run: nothing lost, nothing judged twice, the
 * same result.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseReport, type Report } from "../report/schema.ts";
import { FileStore } from "../store/files.node.ts";
import type { ItemRecord } from "../store/types.ts";

export const BIN = fileURLToPath(new URL("./bin.mjs", import.meta.url));
export const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CODE_VERSION = `fault-suite-${process.pid}`;

/** A seeded PRNG (mulberry32) for kill times, so a failing seed can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
  /** True when this harness killed it (it did not finish on its own). */
  readonly killed: boolean;
}

export interface CliRun {
  readonly child: ChildProcess;
  readonly done: Promise<CliResult>;
  /** SIGKILL now (when still running). */
  kill(): void;
}

/** Starts `evalrx …args` in `cwd`. */
export function startCli(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): CliRun {
  const child = spawn(BIN, [...args], {
    cwd: options.cwd ?? REPO,
    // One code version for every process of a scenario: a commit landing mid-sweep must not change a run's plan.
    env: { ...process.env, EVALRX_CODE_VERSION: CODE_VERSION, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let killed = false;
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, out, err, killed })),
  );
  return {
    child,
    done,
    kill() {
      if (child.exitCode === null && child.signalCode === null) {
        killed = true;
        child.kill("SIGKILL");
      }
    },
  };
}

/** Runs `evalrx …args` to the end. */
export function runCli(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  return startCli(args, options).done;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `ready()` holds or the run ends; then kills it when still running. */
export async function killWhen(run: CliRun, ready: () => boolean | Promise<boolean>): Promise<CliResult> {
  let ended = false;
  void run.done.then(() => (ended = true));
  while (!ended && !(await ready())) await sleep(5);
  run.kill();
  return run.done;
}

/** Items stored in one run of a file store, by counting whole lines of its log (cheap enough to poll). */
export function storedItemCount(storeDir: string, runId?: string): number {
  const runs = join(storeDir, "runs");
  if (!existsSync(runs)) return 0;
  let count = 0;
  for (const name of readdirSync(runs)) {
    if (runId !== undefined && name !== encodeURIComponent(runId)) continue;
    const log = join(runs, name, "items.jsonl");
    if (!existsSync(log)) continue;
    const text = readFileSync(log, "utf8");
    for (const line of text.slice(0, text.lastIndexOf("\n") + 1).split("\n"))
      if (line) count += (line.match(/"runId":/g) ?? []).length - 1; // one per item, minus the progress marker
  }
  return count;
}

/** What a trial produced, keyed by case and repeat: what must match an uninterrupted run. */
export function trialsOf(items: readonly ItemRecord[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const i of items) out.set(`${i.caseId}#${i.repeat}`, JSON.stringify([i.output, i.passed, i.error ?? null]));
  return out;
}

/** Every check a stored run must pass after any number of kills: each planned item once, nothing more. */
export async function checkRunIntegrity(
  storeDir: string,
  runId: string,
): Promise<{ items: ItemRecord[]; problems: string[] }> {
  const store = await FileStore.open(storeDir);
  const items = await store.items(runId);
  const progress = await store.progress(runId);
  const problems: string[] = [];
  const indexes = new Set(items.map((i) => i.index));
  if (indexes.size !== items.length) problems.push(`${runId}: an index is stored twice`);
  const trials = new Set(items.map((i) => `${i.caseId}#${i.repeat}`));
  if (trials.size !== items.length) problems.push(`${runId}: a trial is stored twice`);
  if (progress && progress.done !== items.length)
    problems.push(`${runId}: progress says ${progress.done} judged, the log holds ${items.length}`);
  if (progress && items.length !== progress.total)
    problems.push(`${runId}: ${items.length} of ${progress.total} planned items stored`);
  const run = await store.getRun(runId);
  if (run?.status !== "finished" && run?.kind === "eval") problems.push(`${runId}: status ${run?.status}`);
  await store.close();
  return { items, problems };
}

// —— eval ——

/** Writes the fault suite's eval config (tiny VLM on a demo sample, sampled answers with a declared seed). */
export function writeEvalConfig(dir: string, sample = 60, repeats = 3): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "eval.json");
  writeFileSync(
    path,
    JSON.stringify({
      name: "fault-pope",
      dataset: join(REPO, "public/demo/pope.jsonl"),
      select: { sample },
      model: "tiny-vlm",
      evaluators: ["yesNo"],
      repeats,
      cluster: true,
      generation: { temperature: 0.7, seed: 7, maxNewTokens: 3 },
    }),
  );
  return path;
}

/** The one run id an eval store holds (the suite runs one eval per store). */
export async function onlyRun(storeDir: string): Promise<string | undefined> {
  if (!existsSync(storeDir)) return undefined;
  const store = await FileStore.open(storeDir);
  const runs = await store.listRuns({ kind: "eval" });
  await store.close();
  return runs[0]?.id;
}

// —— investigate ——

/** What an investigation decided, without timestamps and event numbers: what must match an uninterrupted run. */
export function decisions(report: Report) {
  return {
    hypotheses: report.hypotheses.map((h) => [h.signal, h.direction, h.verdict, h.sealedN, h.eValue]),
    repairs: report.repairs?.candidates.map((c) => [c.tier, c.candidate, c.fixed, c.broken, c.p, c.e, c.validated]),
    failures: report.provenance.data.labelDistribution,
    n: report.provenance.data.n,
  };
}

/** The report an output folder holds, when it holds a whole one. */
export function readReport(out: string): Report | undefined {
  try {
    return parseReport(readFileSync(join(out, "report.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/** Every run of an investigation's store: each planned item stored once. */
export async function checkInvestigationStore(out: string): Promise<string[]> {
  const storeDir = join(out, "store");
  const store = await FileStore.open(storeDir);
  const runs = await store.listRuns();
  await store.close();
  const problems: string[] = [];
  for (const r of runs) problems.push(...(await checkRunIntegrity(storeDir, r.id)).problems);
  return problems;
}
