/**
 * The page's sandbox runner: one fresh `workers/sandbox.worker.ts` per
 * analysis, terminated when the reply comes, when the time budget runs out,
 * or when the worker dies (an out-of-memory worker is stopped by the browser
 * and reported as such). The reply is checked here (`readReply`), never trusted.
 */
import { overTime, readReply, runLocked, type SandboxOutcome, type SandboxRunner } from "./protocol.ts";

export interface WorkerSandboxOptions {
  /** Wall time the analysis may run, from its request to its reply (default 2000 ms). */
  readonly timeMs?: number;
  /** Time the worker may take to load and lock itself before the request is sent (default 15000 ms). */
  readonly startMs?: number;
  /** Makes the worker (tests may point at another entry); the sandbox worker by default. */
  readonly makeWorker?: () => Worker;
}

function sandboxWorker(): Worker {
  return new Worker(new URL("../../../workers/sandbox.worker.ts", import.meta.url), { type: "module" });
}

/**
 * A runner for analyses in a locked worker.
 *
 * @example const outcome = await workerSandbox({ timeMs: 1000 }).run({ protocol: 1, kind: "run", code: "return {}", input: "{}" })
 */
export function workerSandbox(options: WorkerSandboxOptions = {}): SandboxRunner {
  const timeMs = options.timeMs ?? 2000;
  const startMs = options.startMs ?? 15_000;
  const make = options.makeWorker ?? sandboxWorker;
  return {
    describe: `page worker (network, storage, nested workers and code-from-strings removed; frozen intrinsics; ${timeMs} ms, then terminated; the browser's worker heap limit)`,
    run(request, runOptions = {}): Promise<SandboxOutcome> {
      return runLocked(request, runOptions.signal, "the worker was terminated", (checked, settle) => {
        const worker = make();
        let t0 = performance.now();
        let started = false;
        const ms = () => Math.round(performance.now() - t0);
        let timer = setTimeout(
          () =>
            settle({
              ok: false,
              reason: "crashed",
              error: `the sandbox worker did not start within ${startMs} ms`,
              ms: ms(),
            }),
          startMs,
        );
        worker.onmessage = (event: MessageEvent<unknown>) => {
          if (!started && event.data === "ready") {
            started = true;
            clearTimeout(timer);
            t0 = performance.now();
            timer = setTimeout(() => settle(overTime(timeMs, "the worker was terminated", ms())), timeMs);
            worker.postMessage(checked);
            return;
          }
          settle(
            started
              ? readReply(event.data, ms())
              : {
                  ok: false,
                  reason: "refused",
                  error: "sandbox message: the worker answered before it was ready",
                  ms: 0,
                },
          );
        };
        worker.onmessageerror = () =>
          settle({ ok: false, reason: "refused", error: "sandbox message: the reply could not be read", ms: ms() });
        worker.onerror = (event: ErrorEvent) => {
          event.preventDefault();
          const message = event.message || "the worker stopped";
          const memory = /memory|allocation|heap/i.test(message);
          settle({
            ok: false,
            reason: memory ? "memory" : "crashed",
            error: memory
              ? `stopped: the analysis ran out of memory (${message})`
              : `the sandbox worker stopped: ${message}`,
            ms: ms(),
          });
        };
        return {
          stop: () => {
            clearTimeout(timer);
            worker.terminate();
          },
          ms,
        };
      });
    },
  };
}
