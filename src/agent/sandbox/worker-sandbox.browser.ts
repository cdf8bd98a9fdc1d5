/**
 * The page's sandbox runner: one fresh `workers/sandbox.worker.ts` per
 * analysis, terminated when the reply comes, when the time budget runs out,
 * or when the worker dies (an out-of-memory worker is stopped by the browser
 * and reported as such). The reply is checked here (`readReply`), never trusted.
 */
import {
  readReply,
  validateRequest,
  type SandboxOutcome,
  type SandboxRequest,
  type SandboxRunner,
} from "./protocol.ts";

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
    run(request: SandboxRequest, runOptions: { readonly signal?: AbortSignal } = {}): Promise<SandboxOutcome> {
      let checked: SandboxRequest;
      try {
        checked = validateRequest(request);
      } catch (error) {
        return Promise.resolve({ ok: false, reason: "refused", error: (error as Error).message, ms: 0 });
      }
      const worker = make();
      return new Promise<SandboxOutcome>((resolve) => {
        let t0 = performance.now();
        let started = false;
        let done = false;
        const finish = (outcome: SandboxOutcome) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          worker.terminate();
          runOptions.signal?.removeEventListener("abort", onAbort);
          resolve(outcome);
        };
        const ms = () => Math.round(performance.now() - t0);
        const onAbort = () =>
          finish({ ok: false, reason: "time", error: "cancelled: the worker was terminated", ms: ms() });
        runOptions.signal?.addEventListener("abort", onAbort);
        let timer = setTimeout(
          () =>
            finish({
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
            timer = setTimeout(
              () =>
                finish({
                  ok: false,
                  reason: "time",
                  error: `stopped: the analysis ran past its time budget of ${timeMs} ms (the worker was terminated)`,
                  ms: ms(),
                }),
              timeMs,
            );
            worker.postMessage(checked);
            return;
          }
          finish(
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
          finish({ ok: false, reason: "refused", error: "sandbox message: the reply could not be read", ms: ms() });
        worker.onerror = (event: ErrorEvent) => {
          event.preventDefault();
          const message = event.message || "the worker stopped";
          const memory = /memory|allocation|heap/i.test(message);
          finish({
            ok: false,
            reason: memory ? "memory" : "crashed",
            error: memory
              ? `stopped: the analysis ran out of memory (${message})`
              : `the sandbox worker stopped: ${message}`,
            ms: ms(),
          });
        };
      });
    },
  };
}
