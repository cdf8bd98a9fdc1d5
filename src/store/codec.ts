import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { StoreError } from "./errors.ts";
import type { EncodedTrace, RunExport, RunFilter, RunRecord, StoredCase, TraceArray, TraceRecord } from "./types.ts";

const ARRAYS = {
  Float32Array,
  Float64Array,
  Int32Array,
  Uint8Array,
} as const;
type ArrayName = keyof typeof ARRAYS;

/** Bytes as base64, in slices so a large array does not overflow the argument list. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, Math.min(i + 0x8000, bytes.length)));
  return btoa(binary);
}

/** The bytes of a base64 text (the inverse of {@link toBase64}). */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** The byte view of a typed array (little-endian on every platform this runs on). */
export function arrayBytes(data: TraceArray): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** A typed array of the named kind over a copy of these bytes. */
export function bytesToArray(type: string, bytes: Uint8Array): TraceArray {
  const Ctor = ARRAYS[type as ArrayName];
  if (!Ctor) throw new Error(`trace data type '${type}' is not one of ${Object.keys(ARRAYS).join(", ")}`);
  const copy = bytes.slice();
  if (copy.byteLength % Ctor.BYTES_PER_ELEMENT)
    throw new Error(`trace data of ${copy.byteLength} bytes is not a whole number of ${type} elements`);
  return new Ctor(copy.buffer, 0, copy.byteLength / Ctor.BYTES_PER_ELEMENT);
}

/** A trace as a run export carries it: its array as `{ type, base64 }` of the little-endian bytes. */
export function encodeTrace(trace: TraceRecord): EncodedTrace {
  return { ...trace, data: { type: trace.data[Symbol.toStringTag], base64: toBase64(arrayBytes(trace.data)) } };
}

/** A trace from a run export, its array rebuilt (the inverse of {@link encodeTrace}). */
export function decodeTrace(trace: EncodedTrace): TraceRecord {
  return { ...trace, data: bytesToArray(trace.data.type, fromBase64(trace.data.base64)) };
}

/** Checks a trace before it is stored: a known array type and a shape that fits the data. */
export function checkTrace(trace: TraceRecord): void {
  if (!(trace.data[Symbol.toStringTag] in ARRAYS))
    throw new StoreError(
      `trace '${trace.name}' of case '${trace.caseId}': data must be a Float32Array, Float64Array, Int32Array or Uint8Array`,
    );
  const size = trace.shape.reduce((a, b) => a * b, 1);
  if (size !== trace.data.length)
    throw new StoreError(
      `trace '${trace.name}' of case '${trace.caseId}': shape [${trace.shape.join(", ")}] holds ${size} values but data has ${trace.data.length}`,
    );
}

/** Checks cases before they are written: all of this dataset, no id twice in one write. */
export function checkCases(datasetId: string, cases: readonly StoredCase[]): void {
  const seen = new Set<string>();
  for (const c of cases) {
    if (c.datasetId !== datasetId)
      throw new StoreError(`case '${c.id}' belongs to dataset '${c.datasetId}', not '${datasetId}'`);
    if (seen.has(c.id))
      throw new StoreError(`case id '${c.id}' appears twice in one write; ids are unique per dataset`);
    seen.add(c.id);
  }
}

/** By id (UTF-16 code units), the order `cases()` returns. */
export function byId(a: { readonly id: string }, b: { readonly id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** True when the run matches every field of the filter. */
export function matchesFilter(run: RunRecord, filter: RunFilter = {}): boolean {
  return (
    (filter.kind === undefined || run.kind === filter.kind) &&
    (filter.dataset === undefined || run.dataset === filter.dataset) &&
    (filter.status === undefined || run.status === filter.status)
  );
}

/** Newest first, then by id, so listings are stable. */
export function byNewest(a: RunRecord, b: RunRecord): number {
  return a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Is this parsed JSON a run export this version can import? Checks the
 * envelope and that every item, event, score and trace belongs to the run,
 * so a hand-edited or foreign file is refused with a reason instead of half-imported.
 */
export function checkExport(data: unknown): RunExport {
  const fail = (why: string): never => {
    throw new StoreError(`not an EvalRx run export: ${why}`);
  };
  if (!data || typeof data !== "object") fail("expected a JSON object");
  const d = data as Partial<RunExport>;
  if (d.format !== "evalrx-run") fail(`format is ${JSON.stringify(d.format)}, expected "evalrx-run"`);
  if (d.version !== 1) fail(`version ${JSON.stringify(d.version)} is not supported (this build reads version 1)`);
  const run = d.run;
  if (!run || typeof run.id !== "string" || typeof run.startedAt !== "string") fail("run record missing or without id");
  for (const key of ["items", "events", "scores", "traces"] as const)
    if (!Array.isArray(d[key])) fail(`${key} must be a list`);
  const id = run!.id;
  if (!id) fail("the run's id is empty");
  if (!["running", "finished", "failed", "cancelled"].includes(run!.status))
    fail(`the run's status is ${JSON.stringify(run!.status)}; expected running, finished, failed or cancelled`);
  if (!run!.config || typeof run!.config !== "object" || Array.isArray(run!.config))
    fail("the run's config is not an object");
  for (const key of ["items", "events", "scores", "traces"] as const)
    for (const record of d[key]! as unknown as { runId?: unknown }[])
      if (!record || record.runId !== id)
        fail(`${key} holds a record of another run (${JSON.stringify(record?.runId) ?? "none"})`);
  const indexes = new Set<number>();
  d.items!.forEach((item, at) => {
    const name = `item ${at}${typeof item.caseId === "string" ? ` (case '${item.caseId}')` : ""}`;
    if (typeof item.caseId !== "string") fail(`${name} has no case id`);
    if (!Number.isSafeInteger(item.index) || item.index < 0) fail(`${name} has index ${JSON.stringify(item.index)}`);
    if (indexes.has(item.index)) fail(`${name} repeats index ${item.index}; each item is stored once`);
    indexes.add(item.index);
    if (!Number.isSafeInteger(item.repeat) || item.repeat < 0)
      fail(`${name} has repeat ${JSON.stringify(item.repeat)}`);
    if (typeof item.passed !== "boolean")
      fail(`${name} has verdict ${JSON.stringify(item.passed) ?? "missing"}; expected true or false`);
    if (!Array.isArray(item.checks)) fail(`${name} has no list of checks`);
  });
  d.events!.forEach((e, at) => {
    if (!Number.isSafeInteger(e.seq) || typeof e.type !== "string") fail(`event ${at} has no seq or type`);
  });
  d.scores!.forEach((score, at) => {
    if (typeof score.name !== "string" || typeof score.value !== "number")
      fail(`score ${at} is not { name, value: number }`);
  });
  return d as RunExport;
}

/** SHA-256 of bytes as 64 hex characters (the same pure-JS hash the datasets use). */
export function sha256Hex(bytes: Uint8Array): string {
  return bytesToHex(sha256(bytes));
}

/** The hex part of an image key (`sha256:<hex>` or bare hex); refuses anything else. */
export function imageHex(hash: string): string {
  const m = /^(?:sha256:)?([0-9a-f]{64})$/.exec(hash);
  if (!m) throw new StoreError(`image key '${hash}' is not sha256:<64 hex>`);
  return m[1]!;
}

/** MIME type from the bytes' signature, when the caller did not say. */
export function imageType(b: Uint8Array): string {
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return "image/gif";
  if (b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45) return "image/webp";
  if (b[0] === 0x42 && b[1] === 0x4d) return "image/bmp";
  return "application/octet-stream";
}
