/**
 * Analyses that try to get out of the sandbox, shared by the worker's
 * (Chromium) and the child process's (Node) tests: each must come back as a
 * failed outcome of one of the expected reasons, never as a result.
 */
import type { SandboxOutcome } from "./protocol.ts";

type Reason = Extract<SandboxOutcome, { ok: false }>["reason"];

export interface EscapeAttempt {
  readonly name: string;
  readonly code: string;
  /** The outcome reasons that count as stopped. */
  readonly reasons: readonly Reason[];
  /** Part of the error text that says why. */
  readonly says?: RegExp;
}

/** The records both runtimes' tests run over: one failing case with one signal, as JSON text. */
export const ONE_RECORD_INPUT = JSON.stringify({
  split: "explore",
  signals: ["x"],
  records: [{ id: "a", failed: true, signals: { x: 1 } }],
});

/** Each attempt reports success as a note, so any result that comes back is an escape. */
export const ESCAPE_ATTEMPTS: readonly EscapeAttempt[] = [
  {
    name: "fetch",
    code: "fetch('http://127.0.0.1:9/'); return { notes: ['sent'] };",
    reasons: ["thrown"],
    says: /fetch/,
  },
  {
    name: "XMLHttpRequest",
    code: "const x = new XMLHttpRequest(); x.open('GET', 'http://127.0.0.1:9/', false); x.send(); return { notes: ['sent'] };",
    reasons: ["thrown"],
    says: /XMLHttpRequest/,
  },
  { name: "WebSocket", code: "new WebSocket('ws://127.0.0.1:9/'); return { notes: ['open'] };", reasons: ["thrown"] },
  {
    name: "importScripts",
    code: "importScripts('http://127.0.0.1:9/x.js'); return { notes: ['loaded'] };",
    reasons: ["thrown"],
  },
  { name: "dynamic import", code: "return import('http://127.0.0.1:9/x.js');", reasons: ["refused"], says: /import/ },
  {
    name: "nested worker",
    code: "new Worker('data:text/javascript,1'); return { notes: ['spawned'] };",
    reasons: ["thrown"],
  },
  { name: "indexedDB", code: "indexedDB.open('x'); return { notes: ['stored'] };", reasons: ["thrown"] },
  { name: "caches", code: "caches.open('x'); return { notes: ['cached'] };", reasons: ["thrown"] },
  { name: "eval", code: "return eval('({ notes: [\"evaluated\"] })');", reasons: ["thrown"] },
  {
    name: "Function constructor via a function",
    code: "const F = (function () {}).constructor; return F('return { notes: [\"compiled\"] }')();",
    reasons: ["thrown"],
  },
  {
    name: "async Function constructor",
    code: "const F = (async function () {}).constructor; F('return 1'); return { notes: ['compiled'] };",
    reasons: ["thrown"],
  },
  {
    name: "the host's process via the global's constructor",
    code: "const p = globalThis.constructor.constructor('return process')(); return { notes: [String(p.pid)] };",
    reasons: ["thrown"],
  },
  {
    name: "Node require",
    code: "const fs = require('fs'); return { notes: [fs.readFileSync('/etc/passwd', 'utf8')] };",
    reasons: ["thrown"],
  },
  {
    name: "prototype tampering",
    code: "Object.prototype.polluted = 'yes'; Array.prototype.map = () => []; return { notes: ['tampered'] };",
    reasons: ["thrown"],
    says: /read.only|not extensible|Cannot add|Cannot assign/i,
  },
  {
    name: "swapping JSON to forge the reply",
    code: "JSON.stringify = () => '{\"tables\":[]}'; return { notes: ['forged'] };",
    reasons: ["thrown"],
  },
  { name: "infinite loop", code: "for (;;) {}", reasons: ["time"], says: /time budget/ },
  {
    name: "memory bomb",
    code: "const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random()));",
    reasons: ["memory", "time"],
  },
  { name: "string bomb", code: "let s = 'x'; for (;;) s += s; ", reasons: ["thrown", "memory", "time"] },
  {
    name: "a reply of the wrong shape",
    code: "return { tables: [{ title: 't', columns: ['a'], rows: [[1, 2]] }], secret: 1 };",
    reasons: ["refused"],
    says: /output/,
  },
  { name: "a non-object reply", code: "return 42;", reasons: ["refused"], says: /output must be an object/ },
  {
    name: "a Promise reply",
    code: "return Promise.resolve({ notes: ['late'] });",
    reasons: ["thrown"],
    says: /Promise/,
  },
];
