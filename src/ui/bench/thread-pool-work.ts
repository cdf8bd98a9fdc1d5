/**
 * What a renderer's background threads spent their CPU on. Chromium's "toplevel" trace records every task of
 * its thread pool (`ThreadPool_RunTask`) with the source function that posted it: V8's WebAssembly compiler,
 * its JavaScript compilers (Maglev, TurboFan, Sparkplug), its garbage collector's helpers, and the rest. The
 * page's own tasks (main thread, workers) are `RunTask` spans and are counted elsewhere; without this, a
 * bench that sums only those misses the CPU the page takes from a second core, which a CLI's process time
 * includes.
 */
import type { TraceEvent } from "./long-task-profile.ts";

/** The kinds of thread-pool work a bench line names. */
export type PoolKind = "wasm compilation" | "JS compilation" | "GC" | "other";

/** CPU milliseconds of one process's thread-pool tasks, by kind. */
export type PoolWork = Readonly<Record<PoolKind, number>>;

/** The kind of a thread-pool task, from the source file or function that posted it. */
export function poolKind(postedFrom: string): PoolKind {
  if (/v8\/src\/wasm\/|wasm::/.test(postedFrom)) return "wasm compilation";
  if (/maglev|compiler-dispatcher|baseline|turbofan|OptimizingCompile|ConcurrentBaseline/i.test(postedFrom))
    return "JS compilation";
  if (/v8\/src\/heap\/|ArrayBufferSweeper|Scavenge|ConcurrentMarking|Sweeper/.test(postedFrom)) return "GC";
  return "other";
}

/**
 * The thread-pool CPU of process `pid` in a parsed trace, by kind, counting tasks that start in [fromUs, toUs).
 *
 * @example
 * poolWork(trace, 4242, 0, Infinity)
 * // → { "wasm compilation": 5025, "JS compilation": 2140, GC: 1230, other: 310 }
 */
export function poolWork(
  parsed: { traceEvents?: readonly TraceEvent[] } | readonly TraceEvent[],
  pid: number,
  fromUs = -Infinity,
  toUs = Infinity,
): PoolWork {
  const events = Array.isArray(parsed)
    ? parsed
    : ((parsed as { traceEvents?: readonly TraceEvent[] }).traceEvents ?? []);
  const out: Record<PoolKind, number> = { "wasm compilation": 0, "JS compilation": 0, GC: 0, other: 0 };
  for (const e of events as readonly TraceEvent[]) {
    if (e.ph !== "X" || e.name !== "ThreadPool_RunTask" || e.pid !== pid) continue;
    const ts = e.ts ?? 0;
    if (ts < fromUs || ts >= toUs) continue;
    const args = (e.args ?? {}) as { src_file?: string; src_func?: string };
    out[poolKind(`${args.src_file ?? ""} ${args.src_func ?? ""}`)] += (e.tdur ?? 0) / 1000;
  }
  return out;
}

/** The sum of a `PoolWork`, in ms. */
export function poolTotal(work: PoolWork): number {
  return Object.values(work).reduce((n, ms) => n + ms, 0);
}
