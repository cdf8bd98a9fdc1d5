/**
 * The page's main-thread tasks as Chromium's own trace times them: each task's wall time and the part of it
 * the thread spent on a CPU. On a shared 2-core machine a task's wall time is mostly the time it waited for a
 * core (a 76 ms task took 729 ms at a load average of 15), so the report bench prints both: the wall time is
 * what a user would feel on this machine, the CPU time is the page's own work. For seconds, not minutes: the
 * trace holds every thread's tasks (a 100 s investigation's is over 512 MB, more than a string can hold).
 */
import type { Browser, Page } from "playwright-core";

/** The longest task by wall time, and the longest by CPU time, in ms. */
export interface MainThreadTasks {
  readonly longestWallMs: number;
  /** CPU time of the task that took the longest wall time. */
  readonly cpuOfLongestMs: number;
  readonly longestCpuMs: number;
  /** Tasks over 50 ms of wall time, and of CPU time. */
  readonly overWall50: number;
  readonly overCpu50: number;
}

interface TraceEvent {
  readonly name?: string;
  readonly ph?: string;
  readonly pid?: number;
  readonly tid?: number;
  readonly dur?: number;
  readonly tdur?: number;
  readonly args?: { readonly name?: string };
}

/** Starts Chromium's trace of every renderer's tasks (`page` is where the trace starts). */
export async function startMainThreadTrace(browser: Browser, page: Page): Promise<void> {
  await browser.startTracing(page, { categories: ["disabled-by-default-devtools.timeline"] });
}

/**
 * Stops the trace and reads the tasks of the busiest renderer main thread (the page measured: the other tabs
 * are idle meanwhile).
 */
export async function stopMainThreadTrace(browser: Browser): Promise<MainThreadTasks> {
  const buffer = await browser.stopTracing();
  const parsed = JSON.parse(buffer.toString("utf8")) as { traceEvents?: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
  const mains = new Set<string>();
  for (const e of events)
    if (e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain") mains.add(`${e.pid}:${e.tid}`);
  const byThread = new Map<string, { dur: number; tdur: number }[]>();
  for (const e of events) {
    const thread = `${e.pid}:${e.tid}`;
    if (e.name !== "RunTask" || e.ph !== "X" || !mains.has(thread)) continue;
    const list = byThread.get(thread) ?? [];
    list.push({ dur: (e.dur ?? 0) / 1000, tdur: (e.tdur ?? 0) / 1000 });
    byThread.set(thread, list);
  }
  const total = (list: { dur: number }[]) => list.reduce((n, t) => n + t.dur, 0);
  const tasks = [...byThread.values()].sort((a, b) => total(b) - total(a))[0] ?? [];
  const longest = tasks.reduce((best, t) => (t.dur > best.dur ? t : best), { dur: 0, tdur: 0 });
  return {
    longestWallMs: longest.dur,
    cpuOfLongestMs: longest.tdur,
    longestCpuMs: Math.max(0, ...tasks.map((t) => t.tdur)),
    overWall50: tasks.filter((t) => t.dur > 50).length,
    overCpu50: tasks.filter((t) => t.tdur > 50).length,
  };
}

/**
 * The two figures in words, for a bench line.
 *
 * @example taskLine(tasks) // "729 ms wall, 76 ms of it on a CPU; longest on a CPU 76 ms (32 over 50 ms wall, 1 over 50 ms CPU)"
 */
export function taskLine(tasks: MainThreadTasks): string {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  return `${ms(tasks.longestWallMs)} wall, ${ms(tasks.cpuOfLongestMs)} of it on a CPU; longest on a CPU ${ms(tasks.longestCpuMs)} (${tasks.overWall50} over 50 ms wall, ${tasks.overCpu50} over 50 ms CPU)`;
}
