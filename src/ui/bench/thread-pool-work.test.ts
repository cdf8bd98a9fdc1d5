import { describe, expect, it } from "vitest";
import { poolKind, poolTotal, poolWork } from "./thread-pool-work.ts";
import type { TraceEvent } from "./long-task-profile.ts";

const task = (pid: number, ts: number, tdurMs: number, src_file: string, src_func: string): TraceEvent =>
  ({
    ph: "X",
    name: "ThreadPool_RunTask",
    pid,
    tid: 7,
    ts,
    dur: tdurMs * 2000,
    tdur: tdurMs * 1000,
    args: { src_file, src_func },
  }) as TraceEvent;

describe("poolKind", () => {
  it("names V8's compilers, its collector and the rest by where the task was posted", () => {
    expect(poolKind("v8/src/wasm/module-compiler.cc CompilationStateImpl::InitCompileJob()")).toBe("wasm compilation");
    expect(poolKind("v8/src/maglev/maglev-concurrent-dispatcher.cc MaglevConcurrentDispatcher")).toBe("JS compilation");
    expect(poolKind("v8/src/compiler-dispatcher/optimizing-compile-dispatcher.cc EnsureStarted")).toBe(
      "JS compilation",
    );
    expect(poolKind("v8/src/heap/array-buffer-sweeper.cc SweepingState")).toBe("GC");
    expect(poolKind("cc/raster/categorized_worker_pool.cc Start")).toBe("other");
  });
});

describe("poolWork", () => {
  const trace = {
    traceEvents: [
      task(1, 10, 5, "v8/src/wasm/module-compiler.cc", "InitCompileJob"),
      task(1, 20, 3, "v8/src/heap/scavenger.cc", "CollectGarbage"),
      task(1, 30, 2, "cc/raster/categorized_worker_pool.cc", "Start"),
      task(2, 40, 100, "v8/src/wasm/module-compiler.cc", "InitCompileJob"), // another process
      { ph: "X", name: "RunTask", pid: 1, tid: 3, ts: 50, tdur: 9000 } as TraceEvent, // a page task, not the pool's
    ],
  };

  it("sums one process's thread-pool CPU by kind, and nothing else", () => {
    expect(poolWork(trace, 1)).toEqual({ "wasm compilation": 5, "JS compilation": 0, GC: 3, other: 2 });
    expect(poolTotal(poolWork(trace, 1))).toBe(10);
  });

  it("counts only the tasks that start inside the window", () => {
    expect(poolWork(trace, 1, 15, 30)).toEqual({ "wasm compilation": 0, "JS compilation": 0, GC: 3, other: 0 });
  });
});
