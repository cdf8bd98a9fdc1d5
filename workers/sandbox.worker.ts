/// <reference lib="webworker" />
/**
 * The analysis sandbox in the page: a dedicated worker made for one analysis
 * and terminated after it. Before any analysis code exists here, it keeps the
 * reply channel and the compiler to itself, then locks the realm (no network,
 * storage, nested workers, timers or code from strings; frozen intrinsics) and
 * says "ready". It accepts exactly one request of the sandbox protocol and
 * answers with one JSON text; the host (`workerSandbox`) checks it, and
 * enforces the time budget by terminating this worker.
 *
 * @example
 *   const worker = new Worker(new URL("../../workers/sandbox.worker.ts", import.meta.url), { type: "module" });
 *   worker.postMessage({ protocol: 1, kind: "run", code: "return { notes: ['hi'] }", input: "{}" });
 */
import { lockdown, runInRealm, WORKER_REMOVED } from "../src/agent/sandbox/lockdown.ts";
import { SANDBOX_PROTOCOL, validateRequest } from "../src/agent/sandbox/protocol.ts";

const scope = self as unknown as DedicatedWorkerGlobalScope;
const reply = scope.postMessage.bind(scope);
// The compiler is kept before the lock; the code it compiles sees only the locked Function (which throws).
const compile = Function;
let used = false;

scope.onmessage = (event: MessageEvent<unknown>) => {
  if (used) return;
  used = true;
  let text: string;
  try {
    const request = validateRequest(event.data);
    // Line 1 of the body is the directive, and Function adds two header lines, so the code's line k is line k + 3 of the compiled function.
    const fn = compile("input", `"use strict";\n${request.code}`) as (input: unknown) => unknown;
    text = runInRealm(fn, request.input, 3);
  } catch (error) {
    text = JSON.stringify({
      protocol: SANDBOX_PROTOCOL,
      kind: "error",
      error: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 900),
    });
  }
  reply(text);
};

lockdown(scope as unknown as Record<string, unknown>, WORKER_REMOVED);
reply("ready");
