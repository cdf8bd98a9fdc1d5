/**
 * The CLI's sandbox runner: one Node child process per analysis, started with
 * the permission model (no file reads or writes, no child processes, no
 * worker threads, no native addons), a small old-space heap, and an empty
 * environment. Inside it the analysis runs in a `vm` context that holds only
 * the ECMAScript built-ins — no `process`, `require`, `fetch` or timers —
 * locked by the same `lockdown` as the page's worker, with code generation
 * from strings and WebAssembly off; only strings cross into it. The parent
 * enforces the time budget (the vm's own timeout, then SIGKILL) and reads
 * the reply through `readReply`.
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { lockdown, runInRealm } from "./lockdown.ts";
import { SANDBOX_BOUNDS, overTime, readReply, runLocked, type SandboxOutcome, type SandboxRunner } from "./protocol.ts";

export interface ChildSandboxOptions {
  /** Wall time the analysis may run (default 2000 ms); the child is killed 1 s after it. */
  readonly timeMs?: number;
  /** The child's old-space heap in MB (default 64): a bigger allocation ends the child. */
  readonly memoryMb?: number;
}

/** The child's own globals it drops before any analysis exists (the vm context never had them). */
const CHILD_REMOVED = ["fetch", "WebSocket", "EventSource", "XMLHttpRequest", "WebAssembly", "Request", "Response"];

/** The permission flag this Node has (`--permission` from 22, `--experimental-permission` in 20), if any. */
export function permissionFlag(flags: ReadonlySet<string> = process.allowedNodeEnvironmentFlags): string | undefined {
  if (flags.has("--permission")) return "--permission";
  if (flags.has("--experimental-permission")) return "--experimental-permission";
  return undefined;
}

function runnerSource(timeMs: number): string {
  // Sources of the shared lockdown, made runnable in the context whatever the transpiler wrapped them with.
  const realm = `(function () { var __name = function (f) { return f; };
    (${String(lockdown)})(globalThis, ["eval", "WebAssembly"]);
    Object.defineProperty(globalThis, "__run", { value: ${String(runInRealm)} });
  })();`;
  return `"use strict";
const vm = require("node:vm");
const write = process.stdout.write.bind(process.stdout);
const exit = process.exit.bind(process);
for (const name of ${JSON.stringify(CHILD_REMOVED)}) { try { delete globalThis[name]; } catch {} }
for (const name of ["getBuiltinModule", "binding", "_linkedBinding", "dlopen"]) { try { process[name] = undefined; } catch {} }
const chunks = [];
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  let text;
  try {
    const request = JSON.parse(chunks.join(""));
    const context = vm.createContext(Object.create(null), {
      codeGeneration: { strings: false, wasm: false },
      microtaskMode: "afterEvaluate",
    });
    vm.runInContext(${JSON.stringify(realm)}, context);
    const fn = vm.compileFunction('"use strict";\\n' + request.code, ["input"], { parsingContext: context, filename: "analysis.js" });
    context.__fn = fn;
    context.__input = request.input;
    text = vm.runInContext("__run(__fn, __input, 1)", context, { timeout: ${timeMs} });
  } catch (e) {
    const timedOut = e && e.code === "ERR_SCRIPT_EXECUTION_TIMEOUT";
    text = JSON.stringify({ protocol: 1, kind: "error", error: timedOut ? "__time__" : String(e && e.name) + ": " + String(e && e.message).slice(0, 900) });
  }
  write(text, () => exit(0));
});`;
}

/**
 * A runner for analyses in a locked child process.
 *
 * @example const outcome = await childSandbox({ timeMs: 1000 }).run({ protocol: 1, kind: "run", code: "return {}", input: "{}" })
 */
export function childSandbox(options: ChildSandboxOptions = {}): SandboxRunner {
  const timeMs = options.timeMs ?? 2000;
  const memoryMb = options.memoryMb ?? 64;
  const permission = permissionFlag();
  const flags = [
    ...(permission ? [permission] : []),
    `--max-old-space-size=${memoryMb}`,
    "--no-warnings",
    "--disallow-code-generation-from-strings",
  ];
  return {
    describe: `node child (${permission ?? "no permission model in this Node"}, ${memoryMb} MB heap, ${timeMs} ms, empty env; analysis in a vm context with built-ins only)`,
    run(request, runOptions = {}): Promise<SandboxOutcome> {
      return runLocked(request, runOptions.signal, "the child was killed", (checked, settle) => {
        const t0 = performance.now();
        const ms = () => Math.round(performance.now() - t0);
        const child = spawn(process.execPath, [...flags, "-e", runnerSource(timeMs)], {
          cwd: tmpdir(),
          env: {},
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        const budget = () => settle(overTime(timeMs, "the child was killed", ms()));
        const killer = setTimeout(budget, timeMs + 1000);
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (chunk: string) => {
          stdout += chunk;
          if (stdout.length > SANDBOX_BOUNDS.replyChars)
            settle({
              ok: false,
              reason: "refused",
              error: `sandbox message: reply must be at most ${SANDBOX_BOUNDS.replyChars} characters (the child was killed)`,
              ms: ms(),
            });
        });
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", (chunk: string) => {
          if (stderr.length < 10_000) stderr += chunk;
        });
        child.on("error", (error) =>
          settle({
            ok: false,
            reason: "crashed",
            error: `the sandbox child did not start: ${error.message}`,
            ms: ms(),
          }),
        );
        child.on("close", (code, signal) => {
          if (/heap out of memory|Reached heap limit|Allocation failed/i.test(stderr))
            return settle({
              ok: false,
              reason: "memory",
              error: `stopped: the analysis ran past its memory bound of ${memoryMb} MB (the child ran out of heap)`,
              ms: ms(),
            });
          if (code !== 0)
            return settle({
              ok: false,
              reason: "crashed",
              error: `the sandbox child exited with ${signal ?? `code ${code}`}: ${stderr.trim().split("\n").slice(-3).join(" ").slice(0, 300)}`,
              ms: ms(),
            });
          if (stdout.includes('"error":"__time__"')) return budget();
          settle(readReply(stdout, ms()));
        });
        child.stdin.on("error", () => {});
        child.stdin.end(JSON.stringify(checked));
        return {
          stop: () => {
            clearTimeout(killer);
            child.kill("SIGKILL");
          },
          ms,
        };
      });
    },
  };
}
