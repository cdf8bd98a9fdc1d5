/**
 * Which code the page's long main-thread tasks ran, for a run of minutes: Chromium's "toplevel" trace gives every
 * task's wall time and the part of it on a CPU (a few MB a minute, where the devtools timeline category holds
 * every call and outgrows a string in 100 s), and V8's sampling profiler on the page's main thread gives the
 * functions running inside each task. The two share Chromium's monotonic clock (microseconds), so a task's
 * samples are the samples inside its span.
 */
import type { Browser, CDPSession, Page } from "playwright-core";
import { poolWork, type PoolWork } from "./thread-pool-work.ts";

/** One main-thread task: where it began (µs, Chromium's clock), its wall time and its CPU time (ms). */
export interface TracedTask {
  readonly ts: number;
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** V8's CPU profile, as `Profiler.stop` returns it. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
      readonly columnNumber: number;
    };
    readonly parent?: number;
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One trace event as Chromium writes it (times in µs). */
export interface TraceEvent {
  readonly name?: string;
  readonly ph?: string;
  readonly pid?: number;
  readonly tid?: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly tdur?: number;
  readonly args?: { readonly name?: string };
}

/** A running trace and profile of one page. */
export interface LongTaskRecording {
  readonly session: CDPSession;
}

/**
 * Starts the trace of every thread (the "toplevel" category unless `categories` names more) and the sampling
 * profiler of `page`'s main thread (1 ms).
 */
export async function startLongTaskRecording(
  browser: Browser,
  page: Page,
  categories: readonly string[] = ["toplevel"],
): Promise<LongTaskRecording> {
  const session = await page.context().newCDPSession(page);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 1000 });
  await browser.startTracing(page, { categories: [...categories] });
  await session.send("Profiler.start");
  return { session };
}

/**
 * Stops both and returns the main-thread tasks of the renderer that ran the most (the page measured) and the
 * profile.
 */
export async function stopLongTaskRecording(
  browser: Browser,
  recording: LongTaskRecording,
): Promise<{
  tasks: TracedTask[];
  mainThread: string;
  threads: ReturnType<typeof threadTasks>;
  profile: CpuProfile;
  /** The CPU of the page renderer's thread pool (V8's compilers and GC helpers, …), by kind. */
  pool: PoolWork;
}> {
  const { profile } = (await recording.session.send("Profiler.stop")) as unknown as { profile: CpuProfile };
  await recording.session.detach().catch(() => undefined);
  const parsed = JSON.parse((await browser.stopTracing()).toString("utf8")) as { traceEvents?: TraceEvent[] };
  const threads = threadTasks(parsed);
  const mainThread = busiestMainThread(threads);
  const pool = poolWork(parsed, Number(mainThread.split(":")[0]));
  return { tasks: threads.get(mainThread)?.tasks ?? [], mainThread, threads, profile, pool };
}

/** The "pid:tid" of the renderer main thread that ran the most (the page measured: the other tabs are idle). */
export function busiestMainThread(threads: ReturnType<typeof threadTasks>): string {
  const total = (list: readonly TracedTask[]) => list.reduce((n, t) => n + t.wallMs, 0);
  return (
    [...threads]
      .filter(([, t]) => t.name === "CrRendererMain")
      .sort((a, b) => total(b[1].tasks) - total(a[1].tasks))[0]?.[0] ?? ""
  );
}

/** Nested RunTask spans (a task run inside another's) count once: the outermost, in order. */
function outermost(tasks: readonly TracedTask[]): TracedTask[] {
  const outer: TracedTask[] = [];
  for (const t of [...tasks].sort((a, b) => a.ts - b.ts)) {
    const last = outer.at(-1);
    if (last && t.ts < last.ts + last.wallMs * 1000) continue;
    outer.push(t);
  }
  return outer;
}

const IDLE = new Set(["(idle)", "(program)", "(root)"]);

/** A function as a bench line names it: its name (or "(anonymous)") and file:line. */
function frameName(frame: CpuProfile["nodes"][number]["callFrame"]): string {
  const file = frame.url.split("/").pop()?.split("?")[0] ?? "";
  return `${frame.functionName || "(anonymous)"}${file ? ` ${file}:${frame.lineNumber + 1}` : ""}`;
}

/**
 * What ran inside the task `task`: the functions with the most samples there, by self time and by total time
 * (each function counted once per sample), `top` of each, as "name file:line ms".
 *
 * @example taskFunctions(profile, task, 3).self // ["foldEvents index.js:812 41 ms", …]
 */
export function taskFunctions(
  profile: CpuProfile,
  task: TracedTask,
  top = 5,
): { self: string[]; total: string[]; sampledMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let t = profile.startTime;
  let sampledMs = 0;
  const end = task.ts + task.wallMs * 1000;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < task.ts || t > end) continue;
    const leaf = byId.get(profile.samples[i]!);
    if (!leaf || IDLE.has(leaf.callFrame.functionName)) continue;
    const dt = (profile.timeDeltas[i + 1] ?? 1000) / 1000;
    sampledMs += dt;
    const leafName = frameName(leaf.callFrame);
    self.set(leafName, (self.get(leafName) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id)!;
      if (IDLE.has(node.callFrame.functionName)) continue;
      const name = frameName(node.callFrame);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + dt);
    }
  }
  const best = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`);
  return { self: best(self), total: best(total), sampledMs };
}

/**
 * The page's whole main-thread profile in one line set: the functions with the most self time and total time
 * over the recording (what the main thread spent its CPU on), `top` of each.
 */
export function profileFunctions(profile: CpuProfile, top = 8): { self: string[]; total: string[] } {
  const all: TracedTask = { ts: profile.startTime, wallMs: (profile.endTime - profile.startTime) / 1000, cpuMs: 0 };
  const { self, total } = taskFunctions(profile, all, top);
  return { self, total };
}

/** Every renderer thread's top-level tasks in a parsed trace, by thread name ("DedicatedWorker thread", …). */
export function threadTasks(
  parsed: { traceEvents?: TraceEvent[] } | TraceEvent[],
): Map<string, { name: string; tasks: TracedTask[] }> {
  const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
  const names = new Map<string, string>();
  for (const e of events)
    if (e.ph === "M" && e.name === "thread_name" && e.args?.name) names.set(`${e.pid}:${e.tid}`, e.args.name);
  const out = new Map<string, { name: string; tasks: TracedTask[] }>();
  for (const e of events) {
    if (e.ph !== "X" || (e.name !== "ThreadControllerImpl::RunTask" && e.name !== "RunTask")) continue;
    const thread = `${e.pid}:${e.tid}`;
    const entry = out.get(thread) ?? { name: names.get(thread) ?? thread, tasks: [] };
    entry.tasks.push({ ts: e.ts ?? 0, wallMs: (e.dur ?? 0) / 1000, cpuMs: (e.tdur ?? 0) / 1000 });
    out.set(thread, entry);
  }
  for (const entry of out.values()) entry.tasks = outermost(entry.tasks);
  return out;
}

/**
 * The CPU and wall time `tasks` spent inside [fromUs, toUs) (a task counted when it starts there).
 *
 * @example busyIn(tasks, 0, 1e6) // { wallMs: 812, cpuMs: 640 }
 */
export function busyIn(tasks: readonly TracedTask[], fromUs: number, toUs: number): { wallMs: number; cpuMs: number } {
  let wallMs = 0;
  let cpuMs = 0;
  for (const t of tasks)
    if (t.ts >= fromUs && t.ts < toUs) {
      wallMs += t.wallMs;
      cpuMs += t.cpuMs;
    }
  return { wallMs, cpuMs };
}

/** A sampling profile of every dedicated worker of the page, taken over the browser's own DevTools session. */
export interface WorkerProfiling {
  stop(): Promise<{ url: string; profile: CpuProfile }[]>;
}

/**
 * Starts V8's sampling profiler (1 ms) in every dedicated worker running now (the model worker, the stats
 * worker…). Playwright opens no DevTools session on a worker, so this attaches to each worker target from the
 * browser's session and talks to it through Target.sendMessageToTarget.
 */
export async function startWorkerProfiling(browser: Browser): Promise<WorkerProfiling> {
  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = (await cdp.send("Target.getTargets")) as unknown as {
    targetInfos: { targetId: string; type: string; url: string }[];
  };
  const workers = targetInfos.filter((t) => t.type === "worker");
  let next = 1;
  const waiting = new Map<number, { done: (v: unknown) => void; fail: (e: Error) => void }>();
  cdp.on("Target.receivedMessageFromTarget", (event: { message: string }) => {
    const reply = JSON.parse(event.message) as { id?: number; result?: unknown; error?: { message: string } };
    const wait = reply.id === undefined ? undefined : waiting.get(reply.id);
    if (!wait) return;
    waiting.delete(reply.id!);
    if (reply.error) wait.fail(new Error(reply.error.message));
    else wait.done(reply.result);
  });
  const send = async (sessionId: string, method: string, params: object = {}): Promise<unknown> => {
    const id = next++;
    const answer = new Promise((done, fail) => waiting.set(id, { done, fail }));
    await cdp.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id, method, params }) });
    return answer;
  };
  const sessions: { url: string; sessionId: string }[] = [];
  for (const w of workers) {
    const { sessionId } = (await cdp.send("Target.attachToTarget", { targetId: w.targetId, flatten: false })) as {
      sessionId: string;
    };
    await send(sessionId, "Profiler.enable");
    await send(sessionId, "Profiler.setSamplingInterval", { interval: 1000 });
    await send(sessionId, "Profiler.start");
    sessions.push({ url: w.url, sessionId });
  }
  return {
    async stop() {
      const out: { url: string; profile: CpuProfile }[] = [];
      for (const s of sessions) {
        const { profile } = (await send(s.sessionId, "Profiler.stop")) as { profile: CpuProfile };
        out.push({ url: s.url, profile });
      }
      await cdp.detach().catch(() => undefined);
      return out;
    },
  };
}
