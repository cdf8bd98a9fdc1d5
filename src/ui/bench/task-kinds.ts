/**
 * What the page's long main-thread tasks were made of: for each task, the time Chromium's devtools timeline
 * says went to script, style recalculation, layout, paint, garbage collection or HTML parsing, and (from V8's
 * sampling profiler, sharing the trace's clock) the functions with the most self time inside it. A bench line
 * that says "102 ms: layout 70, script 25" points at the fix; a bare "102 ms" does not.
 */
import { writeFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import {
  busiestMainThread,
  profileFunctions,
  startLongTaskRecording,
  taskFunctions,
  threadTasks,
  type CpuProfile,
  type LongTaskRecording,
  type TraceEvent,
  type TracedTask,
} from "./long-task-profile.ts";

/** The kinds of main-thread work a bench line names. */
export type TaskKind = "script" | "style" | "layout" | "paint" | "gc" | "parse";

/** Timeline event names, by the kind of work they time (events nested in them are subtracted). */
const KIND_OF: Readonly<Record<string, TaskKind>> = {
  FunctionCall: "script",
  EvaluateScript: "script",
  "v8.compile": "script",
  "v8.compileModule": "script",
  "v8.evaluateModule": "script",
  TimerFire: "script",
  FireAnimationFrame: "script",
  EventDispatch: "script",
  RunMicrotasks: "script",
  "V8.Execute": "script",
  UpdateLayoutTree: "style",
  ScheduleStyleRecalculation: "style",
  Layout: "layout",
  PrePaint: "paint",
  Paint: "paint",
  Layerize: "paint",
  UpdateLayer: "paint",
  UpdateLayerTree: "paint",
  CompositeLayers: "paint",
  Commit: "paint",
  MinorGC: "gc",
  MajorGC: "gc",
  "V8.GC_SCAVENGER": "gc",
  "V8.GC_MARK_COMPACTOR": "gc",
  "V8.GC_MC_BACKGROUND_MARKING": "gc",
  BlinkGC: "gc",
  ParseHTML: "parse",
};

/**
 * How many ms of `task` (on thread "pid:tid") went to each kind of work, by wall time: each microsecond is
 * counted once, for the innermost timed event around it; time inside the task but in no known event is
 * "other".
 *
 * @example taskKinds(events, "7:1", { ts: 0, wallMs: 10, cpuMs: 10 }) // { script: 6, layout: 3, other: 1 }
 */
export function taskKinds(
  events: readonly TraceEvent[],
  thread: string,
  task: TracedTask,
): Partial<Record<TaskKind | "other", number>> {
  const end = task.ts + task.wallMs * 1000;
  const inside = events
    .filter(
      (e) =>
        e.ph === "X" &&
        e.name !== undefined &&
        KIND_OF[e.name] !== undefined &&
        `${e.pid}:${e.tid}` === thread &&
        e.ts !== undefined &&
        e.dur !== undefined &&
        e.ts >= task.ts &&
        e.ts < end,
    )
    .sort((a, b) => a.ts! - b.ts! || b.dur! - a.dur!);
  const out: Partial<Record<TaskKind | "other", number>> = {};
  const add = (kind: TaskKind | "other", us: number) => {
    if (us > 0) out[kind] = (out[kind] ?? 0) + us / 1000;
  };
  // A stack of open events: an event's time is its own, less that of the events directly nested in it.
  const stack: { end: number; kind: TaskKind; own: number }[] = [];
  let covered = 0;
  const close = (upTo: number) => {
    while (stack.length && stack.at(-1)!.end <= upTo) {
      const done = stack.pop()!;
      add(done.kind, done.own);
    }
  };
  for (const e of inside) {
    close(e.ts!);
    const eventEnd = Math.min(e.ts! + e.dur!, end);
    const parent = stack.at(-1);
    if (parent) parent.own -= eventEnd - e.ts!;
    else covered += eventEnd - e.ts!;
    stack.push({ end: eventEnd, kind: KIND_OF[e.name!]!, own: eventEnd - e.ts! });
  }
  close(Infinity);
  add("other", task.wallMs * 1000 - covered);
  return out;
}

/**
 * The kinds in words, largest first, in whole ms.
 *
 * @example kindsLine({ script: 61.2, layout: 30.4, other: 0.2 }) // "script 61, layout 30"
 */
export function kindsLine(kinds: Partial<Record<TaskKind | "other", number>>): string {
  return (
    Object.entries(kinds)
      .filter(([, ms]) => ms >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .map(([kind, ms]) => `${kind} ${ms.toFixed(0)}`)
      .join(", ") || "nothing traced"
  );
}

/** Starts the devtools timeline trace (every thread) and V8's sampling profiler on `page`'s main thread (1 ms). */
export function startTaskKindRecording(browser: Browser, page: Page): Promise<LongTaskRecording> {
  return startLongTaskRecording(browser, page, [
    "toplevel",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "v8",
    "blink.gc",
    "blink.user_timing",
  ]);
}

/** One main-thread task over 50 ms (wall or CPU), with what it was made of. */
export interface AttributedTask extends TracedTask {
  /** Where it began, in ms from the start of the recording. */
  readonly atMs: number;
  readonly kinds: Partial<Record<TaskKind | "other", number>>;
  /** The functions with the most self time in it, as "name file:line ms". */
  readonly functions: readonly string[];
}

/** What a traced stretch of the page cost its main thread. */
export interface TaskKindReport {
  readonly longestWallMs: number;
  readonly longestCpuMs: number;
  readonly overWall50: number;
  readonly overCpu50: number;
  readonly mainCpuMs: number;
  /** The whole stretch's main-thread time by kind (every task, not only long ones). */
  readonly kinds: Partial<Record<TaskKind | "other", number>>;
  /** The main thread's functions with the most self time over the stretch. */
  readonly functions: readonly string[];
  /** Tasks over 50 ms of wall or CPU time, longest first. */
  readonly long: readonly AttributedTask[];
  /** The CPU time of the page's other busy threads meanwhile (a worker named by its script), busiest first. */
  readonly others: readonly { readonly thread: string; readonly cpuMs: number }[];
}

/**
 * Stops the recording and attributes the busiest renderer main thread's tasks from the page's
 * `performance.mark(from)` on (the task that started the profiler, a second of wall time, comes before it);
 * `keep` names a file to write the trace to (for Perfetto or chrome://tracing).
 */
export async function stopTaskKindRecording(
  browser: Browser,
  recording: LongTaskRecording,
  from: string,
  keep?: string,
): Promise<TaskKindReport> {
  const { profile } = (await recording.session.send("Profiler.stop")) as unknown as { profile: CpuProfile };
  await recording.session.detach().catch(() => undefined);
  const trace = await browser.stopTracing();
  if (keep) writeFileSync(keep, trace);
  const parsed = JSON.parse(trace.toString("utf8")) as { traceEvents?: TraceEvent[] };
  const events = parsed.traceEvents ?? [];
  const threads = threadTasks(parsed);
  const main = busiestMainThread(threads);
  const mark = events.find((e) => e.name === from && e.ts !== undefined && `${e.pid}:${e.tid}` === main);
  if (!mark) throw new Error(`the trace has no performance.mark('${from}') on the page's main thread`);
  const tasks = (threads.get(main)?.tasks ?? []).filter((t) => t.ts >= mark.ts!);
  const kinds: Partial<Record<TaskKind | "other", number>> = {};
  for (const t of tasks)
    for (const [k, ms] of Object.entries(taskKinds(events, main, t)))
      kinds[k as TaskKind] = (kinds[k as TaskKind] ?? 0) + ms;
  const long = tasks
    .filter((t) => t.wallMs > 50 || t.cpuMs > 50)
    .sort((a, b) => b.wallMs - a.wallMs)
    .map((t) => ({
      ...t,
      atMs: (t.ts - profile.startTime) / 1000,
      kinds: taskKinds(events, main, t),
      functions: taskFunctions(profile, t, 4).self,
    }));
  return {
    longestWallMs: Math.max(0, ...tasks.map((t) => t.wallMs)),
    longestCpuMs: Math.max(0, ...tasks.map((t) => t.cpuMs)),
    overWall50: tasks.filter((t) => t.wallMs > 50).length,
    overCpu50: tasks.filter((t) => t.cpuMs > 50).length,
    mainCpuMs: tasks.reduce((n, t) => n + t.cpuMs, 0),
    kinds,
    functions: profileFunctions(profile, 6).self,
    long,
    others: otherThreads(events, threads, main, mark.ts!),
  };
}

/** The CPU ms of the main thread's process's other threads from `fromUs` on, over 20 ms, busiest first. */
function otherThreads(
  events: readonly TraceEvent[],
  threads: ReturnType<typeof threadTasks>,
  main: string,
  fromUs: number,
): { thread: string; cpuMs: number }[] {
  const pid = main.split(":")[0];
  // A dedicated worker's thread is named by the first script its events mention (stats.worker, model.worker).
  const scripts = new Map<string, string>();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (scripts.has(key)) continue;
    const url = /"(?:url|fileName)":"[^"]*\/([\w.]+?)(?:-[\w-]{8})?\.js"/.exec(JSON.stringify(e.args ?? {}))?.[1];
    if (url) scripts.set(key, url);
  }
  return [...threads]
    .filter(([key]) => key !== main && key.split(":")[0] === pid)
    .map(([key, t]) => ({
      thread: t.name === "DedicatedWorker thread" ? `worker ${scripts.get(key) ?? key}` : t.name,
      cpuMs: t.tasks.filter((x) => x.ts >= fromUs).reduce((n, x) => n + x.cpuMs, 0),
    }))
    .filter((t) => t.cpuMs > 20)
    .sort((a, b) => b.cpuMs - a.cpuMs);
}
