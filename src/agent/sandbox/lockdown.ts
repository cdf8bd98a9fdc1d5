/**
 * What runs inside the sandbox's own realm, before and around the analysis
 * code: `lockdown` takes away every way out (network, storage, nested
 * workers, code from strings) and freezes the intrinsics; `runInRealm` calls
 * the compiled analysis on its input and returns the reply as JSON text.
 *
 * Both functions are self-contained (no imports, no outer bindings): the worker
 * calls them directly, and the Node child injects their source text into its
 * `vm` context, so one lockdown serves both runtimes.
 */

/** Globals a worker must not keep: network, storage, nested workers, code loading, timers, the reply channel. */
export const WORKER_REMOVED: readonly string[] = [
  "fetch",
  "fetchLater",
  "XMLHttpRequest",
  "WebSocket",
  "WebSocketStream",
  "WebTransport",
  "EventSource",
  "RTCPeerConnection",
  "importScripts",
  "Worker",
  "SharedWorker",
  "ServiceWorker",
  "indexedDB",
  "IDBFactory",
  "caches",
  "CacheStorage",
  "BroadcastChannel",
  "MessageChannel",
  "navigator",
  "StorageManager",
  "FileSystemHandle",
  "FileSystemFileHandle",
  "FileSystemDirectoryHandle",
  "webkitRequestFileSystem",
  "webkitRequestFileSystemSync",
  "webkitResolveLocalFileSystemURL",
  "Notification",
  "WebAssembly",
  "eval",
  "setTimeout",
  "setInterval",
  "queueMicrotask",
  "requestAnimationFrame",
  "scheduler",
  "postMessage",
  "close",
];

/**
 * Locks the realm whose global is `g`: removes each of `names` from the global and its prototype chain
 * (shadowed by `undefined` where a property cannot be deleted), makes every function constructor throw
 * (`Function("…")`, `(async () => {}).constructor("…")`), removes `URL.createObjectURL`, and freezes the
 * intrinsics and the global's own values so the code cannot tamper with what the host later reads.
 * Throws when a name is still reachable afterwards: the lock fails closed.
 *
 * @example lockdown(self, WORKER_REMOVED); typeof fetch // "undefined"
 */
export function lockdown(g: Record<string, unknown>, names: readonly string[]): void {
  const blocked = function () {
    throw new EvalError("the sandbox does not compile code from strings");
  };
  const fnProtos = [
    Function.prototype,
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}),
    Object.getPrototypeOf(async function* () {}),
  ];
  for (const proto of fnProtos)
    Object.defineProperty(proto, "constructor", { value: blocked, writable: false, configurable: false });
  Object.defineProperty(g, "Function", { value: blocked, writable: false, configurable: false });
  const url = g.URL as { createObjectURL?: unknown } | undefined;
  if (url && "createObjectURL" in url) delete url.createObjectURL;
  for (const name of names) {
    for (let o: object | null = g; o; o = Object.getPrototypeOf(o)) {
      const d = Object.getOwnPropertyDescriptor(o, name);
      if (d && d.configurable) delete (o as Record<string, unknown>)[name];
    }
    if (name in g) Object.defineProperty(g, name, { value: undefined, writable: false, configurable: false });
    if (typeof g[name] !== "undefined") throw new Error("lockdown: " + name + " is still reachable");
  }
  const seen = new Set<unknown>();
  const freeze = (x: unknown): void => {
    if ((typeof x !== "object" && typeof x !== "function") || x === null || seen.has(x)) return;
    seen.add(x);
    Object.freeze(x);
    for (const key of Reflect.ownKeys(x as object)) {
      const d = Object.getOwnPropertyDescriptor(x, key);
      if (d && "value" in d) freeze(d.value);
      else if (d) {
        freeze(d.get);
        freeze(d.set);
      }
    }
    freeze(Object.getPrototypeOf(x));
  };
  const hidden = [
    fnProtos,
    Object.getPrototypeOf(Int8Array),
    Object.getPrototypeOf([][Symbol.iterator]()),
    Object.getPrototypeOf(new Map()[Symbol.iterator]()),
    Object.getPrototypeOf(new Set()[Symbol.iterator]()),
    Object.getPrototypeOf(""[Symbol.iterator]()),
    Object.getPrototypeOf("a".matchAll(/a/g)),
  ];
  freeze(hidden);
  for (const key of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, key);
    if (!d || !("value" in d)) continue;
    if (d.value !== g) freeze(d.value);
    // The host's own reply path reads globals (JSON, Object): the code must not swap them.
    if (d.configurable) Object.defineProperty(g, key, { value: d.value, writable: false, configurable: false });
  }
  for (let o: object | null = Object.getPrototypeOf(g); o; o = Object.getPrototypeOf(o)) freeze(o);
}

/**
 * Runs the compiled analysis `fn` on `inputJson` (parsed and deep-frozen in this realm) and returns the reply
 * as JSON text: `{protocol:1, kind:"result", output}` or `{protocol:1, kind:"error", error}` with the line of
 * the analysis code that threw, when the stack names one. Never throws.
 *
 * @example runInRealm((input) => ({ notes: [String(input.records.length)] }), '{"records":[]}') // '{"protocol":1,"kind":"result","output":{"notes":["0"]}}'
 */
export function runInRealm(fn: (input: unknown) => unknown, inputJson: string, lineOffset = 0): string {
  const describe = (e: unknown): string => {
    try {
      if (e instanceof Error) {
        const stack = String(e.stack);
        // Node names the compiled analysis analysis.js; Chromium calls a Function-compiled body <anonymous>.
        const m = /analysis\.js:(\d+):\d+/.exec(stack) ?? /[\s(,]<anonymous>:(\d+):\d+/.exec(stack);
        const line = m ? " (analysis line " + (Number(m[1]) - lineOffset) + ")" : "";
        return (e.name + ": " + e.message).slice(0, 900) + line;
      }
      return "the analysis threw a non-Error value: " + String(e).slice(0, 200);
    } catch {
      return "the analysis threw a value that cannot be described";
    }
  };
  try {
    const deepFreeze = (x: unknown): unknown => {
      if (typeof x === "object" && x !== null) {
        Object.freeze(x);
        for (const v of Object.values(x)) deepFreeze(v);
      }
      return x;
    };
    const value = fn(deepFreeze(JSON.parse(inputJson)));
    if (typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function")
      return JSON.stringify({
        protocol: 1,
        kind: "error",
        error: "TypeError: the analysis returned a Promise; return { tables, figures, notes, suggestions } directly",
      });
    const json = JSON.stringify(value === undefined ? null : value);
    return '{"protocol":1,"kind":"result","output":' + json + "}";
  } catch (e) {
    return JSON.stringify({ protocol: 1, kind: "error", error: describe(e) });
  }
}
