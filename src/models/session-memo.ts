/**
 * Runs of a session that were already done, answered from memory: an ONNX
 * graph without random ops is a pure function of its feeds, so a run whose
 * feeds (and fetches) equal an earlier one's gets that run's outputs back, as
 * fresh copies. An investigation asks for the same work many times over — the
 * vision encoder sees one image per several questions and once per generate
 * and forward of each; every repair candidate regenerates the unmodified
 * answer — and in the page's worker each run costs about twice what it costs
 * under onnxruntime-node.
 */
import { readOnnxGraph, walkNodes, type OnnxGraph } from "./onnx-read.ts";
import type { PlainTensor, RunOptions, Session, SessionFactory, SessionOptions } from "./session.ts";

/** How much a memo keeps, and when it gives up on a session whose runs never repeat. */
export interface SessionMemoOptions {
  /** Feeds + outputs kept per session, in bytes (least recently used go first); default 64 MiB. */
  readonly maxBytes?: number;
  /** A run whose feeds or outputs are larger than this is neither looked up nor kept; default 16 MiB (a real VLM's image features: 576 × 4096 floats, 9 MiB). */
  readonly maxRunBytes?: number;
  /** After this many runs with under `minHitRate` answered from memory, the session stops memoising; default 256. */
  readonly probeRuns?: number;
  readonly minHitRate?: number;
}

/** How a memoised session has done: runs, runs answered from memory, bytes kept, whether it gave up. */
export interface SessionMemoStats {
  readonly runs: number;
  readonly hits: number;
  readonly bytes: number;
  readonly entries: number;
  readonly off: boolean;
}

/** A session whose repeated runs are answered from memory. */
export interface MemoSession extends Session {
  readonly memo: () => SessionMemoStats;
}

/** Operators whose outputs are not a function of their inputs: a graph holding one is never memoised. */
const RANDOM_OPS = [
  "RandomNormal",
  "RandomUniform",
  "RandomNormalLike",
  "RandomUniformLike",
  "Multinomial",
  "Bernoulli",
];

/**
 * Whether a model's graph (its subgraphs and local functions included) holds
 * an operator whose outputs are not a function of its inputs; a graph that
 * cannot be read counts as holding one (it is then never memoised).
 *
 * @example hasRandomOps(readFileSync("models/tiny-vlm/onnx/vision_encoder.onnx")) // → false
 */
export function hasRandomOps(bytes: Uint8Array): boolean {
  let graph: OnnxGraph;
  try {
    graph = readOnnxGraph(bytes);
  } catch {
    return true;
  }
  for (const scope of [graph, ...graph.functions.values()])
    for (const { node } of walkNodes(scope)) if (RANDOM_OPS.includes(node.opType)) return true;
  return false;
}

interface Entry {
  readonly feeds: readonly (readonly [string, PlainTensor])[];
  readonly fetches: string;
  readonly outputs: Readonly<Record<string, PlainTensor>>;
  readonly bytes: number;
}

const bytesOf = (t: PlainTensor) => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);

function copy(t: PlainTensor): PlainTensor {
  return { type: t.type, data: t.data.slice() as PlainTensor["data"], dims: [...t.dims] };
}

function sameTensor(a: PlainTensor, b: PlainTensor): boolean {
  if (a.type !== b.type || a.dims.length !== b.dims.length || a.data.byteLength !== b.data.byteLength) return false;
  for (let i = 0; i < a.dims.length; i++) if (a.dims[i] !== b.dims[i]) return false;
  const x = bytesOf(a);
  const y = bytesOf(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * Two 32-bit FNV-1a style hashes over every feed's name, type, dims and bytes (then compared in full on a hit).
 * The mixing is written out in each loop rather than called: a job's first runs execute before the JIT has
 * optimised anything, and a call per word of a vision encoder's pixels was a third of the memo's cost there.
 */
function feedKey(feeds: readonly (readonly [string, PlainTensor])[], fetches: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ fetches.length;
  const header: number[] = [];
  for (const [name, t] of feeds) {
    header.length = 0;
    for (let i = 0; i < name.length; i++) header.push(name.charCodeAt(i));
    header.push(...t.dims);
    const b = bytesOf(t);
    const words = b.byteOffset % 4 === 0 ? b.length >> 2 : 0;
    const w = new Int32Array(b.buffer, b.byteOffset, words);
    for (let i = 0; i < header.length; i++) {
      h1 = Math.imul(h1 ^ header[i]!, 0x01000193);
      h2 = Math.imul(h2 ^ header[i]!, 0x5bd1e995) ^ (h2 >>> 15);
    }
    for (let i = 0; i < words; i++) {
      h1 = Math.imul(h1 ^ w[i]!, 0x01000193);
      h2 = Math.imul(h2 ^ w[i]!, 0x5bd1e995) ^ (h2 >>> 15);
    }
    for (let i = words * 4; i < b.length; i++) {
      h1 = Math.imul(h1 ^ b[i]!, 0x01000193);
      h2 = Math.imul(h2 ^ b[i]!, 0x5bd1e995) ^ (h2 >>> 15);
    }
  }
  return `${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}|${fetches}`;
}

/**
 * `session`, with repeated runs answered from memory: same feeds (names,
 * types, dims, bytes) and same fetches → the outputs of the first such run,
 * copied (callers may write into or transfer what they get), or, for a caller
 * that borrows (`{ borrow: true }`), the kept arrays themselves. Keeps up to
 * `maxBytes`, least recently used first out; a session whose runs rarely
 * repeat stops memoising after `probeRuns` runs.
 *
 * @example
 * const vision = memoSession(await nodeSessions(bytes, { name: "onnx/vision_encoder.onnx" }));
 * await vision.run({ pixel_values }); await vision.run({ pixel_values }); // the second is not computed
 * vision.memo() // → { runs: 2, hits: 1, … }
 */
export function memoSession(session: Session, options: SessionMemoOptions = {}): MemoSession {
  const maxBytes = options.maxBytes ?? 64 * 2 ** 20;
  const maxRunBytes = options.maxRunBytes ?? 16 * 2 ** 20;
  const probeRuns = options.probeRuns ?? 256;
  const minHitRate = options.minHitRate ?? 0.05;
  if (!(maxBytes > 0) || !(maxRunBytes > 0) || !(probeRuns >= 1) || !(minHitRate >= 0 && minHitRate <= 1))
    throw new RangeError(
      `memoSession(): expected maxBytes > 0, maxRunBytes > 0, probeRuns ≥ 1 and 0 ≤ minHitRate ≤ 1, got ${JSON.stringify(options)}`,
    );
  const kept = new Map<string, Entry>();
  let bytes = 0;
  let runs = 0;
  let hits = 0;
  let off = false;
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    memo: () => ({ runs, hits, bytes, entries: kept.size, off }),
    async run(feeds, fetches, options?: RunOptions) {
      // A borrowing caller keeps its hands off these arrays, so they are kept and handed back as they are: in a
      // browser, copying a decoder run's feeds and outputs was a quarter of an investigation's repair stage.
      const keep = options?.borrow ? (t: PlainTensor) => t : copy;
      if (options?.memo === false) return session.run(feeds, fetches);
      runs++;
      if (off) return session.run(feeds, fetches);
      if (runs > probeRuns && hits < minHitRate * runs) {
        off = true;
        kept.clear();
        bytes = 0;
        return session.run(feeds, fetches);
      }
      // Feeds the graph does not take are dropped by the session, so they are not part of what it computes.
      const taken = Object.entries(feeds)
        .filter(([name]) => session.inputNames.includes(name))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const feedBytes = taken.reduce((n, [, t]) => n + t.data.byteLength, 0);
      if (feedBytes > maxRunBytes) return session.run(feeds, fetches);
      const wanted = fetches ? [...fetches].join("\u0000") : "\u0001all";
      const key = feedKey(taken, wanted);
      const found = kept.get(key);
      if (
        found &&
        found.fetches === wanted &&
        found.feeds.length === taken.length &&
        found.feeds.every(([name, t], i) => name === taken[i]![0] && sameTensor(t, taken[i]![1]))
      ) {
        hits++;
        kept.delete(key);
        kept.set(key, found);
        return Object.fromEntries(Object.entries(found.outputs).map(([name, t]) => [name, keep(t)]));
      }
      const outputs = await session.run(feeds, fetches);
      const outBytes = Object.values(outputs).reduce((n, t) => n + t.data.byteLength, 0);
      if (outBytes <= maxRunBytes) {
        const entry: Entry = {
          feeds: taken.map(([name, t]) => [name, keep(t)] as const),
          fetches: wanted,
          outputs: Object.fromEntries(Object.entries(outputs).map(([name, t]) => [name, keep(t)])),
          bytes: feedBytes + outBytes,
        };
        const previous = kept.get(key);
        if (previous) {
          kept.delete(key);
          bytes -= previous.bytes;
        }
        kept.set(key, entry);
        bytes += entry.bytes;
        for (const [oldest, e] of kept) {
          if (bytes <= maxBytes) break;
          kept.delete(oldest);
          bytes -= e.bytes;
        }
      }
      return outputs;
    },
    release: () => {
      kept.clear();
      bytes = 0;
      return session.release();
    },
  };
}

/**
 * `factory`, making memoised sessions (see `memoSession`) for every graph
 * without a random operator; a graph with one gets a plain session.
 *
 * @example const model = await loadOrtModel(files, memoSessions(webSessions("wasm")));
 */
export function memoSessions(factory: SessionFactory, options: SessionMemoOptions = {}): SessionFactory {
  return async (bytes: Uint8Array, sessionOptions: SessionOptions) => {
    const session = await factory(bytes, sessionOptions);
    return hasRandomOps(bytes) ? session : memoSession(session, options);
  };
}
