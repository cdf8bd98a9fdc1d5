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

const EMPTY_WORDS = new Int32Array(0);

/** Whether two tensors hold the same type, dims and bytes; the same array is equal to itself without a look. */
function sameTensor(a: PlainTensor, b: PlainTensor): boolean {
  if (a.type !== b.type || a.dims.length !== b.dims.length || a.data.byteLength !== b.data.byteLength) return false;
  for (let i = 0; i < a.dims.length; i++) if (a.dims[i] !== b.dims[i]) return false;
  if (a.data === b.data) return true;
  const x = bytesOf(a);
  const y = bytesOf(b);
  // Word by word where both are aligned (every float and integer tensor): a quarter of the steps of a byte loop.
  const words = x.byteOffset % 4 === 0 && y.byteOffset % 4 === 0 ? x.length >> 2 : 0;
  const xw = words ? new Int32Array(x.buffer, x.byteOffset, words) : EMPTY_WORDS;
  const yw = words ? new Int32Array(y.buffer, y.byteOffset, words) : EMPTY_WORDS;
  for (let i = 0; i < words; i++) if (xw[i] !== yw[i]) return false;
  for (let i = words * 4; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * Two 32-bit FNV-1a style hashes of a tensor's bytes. The mixing is written out in each loop rather than called: a
 * job's first runs execute before the JIT has optimised anything, and a call per word of a vision encoder's pixels
 * was a third of the memo's cost there.
 */
function dataHash(t: PlainTensor): readonly [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  const b = bytesOf(t);
  const words = b.length >> 2;
  if (b.byteOffset % 4 === 0) {
    const w = new Int32Array(b.buffer, b.byteOffset, words);
    for (let i = 0; i < words; i++) {
      h1 = Math.imul(h1 ^ w[i]!, 0x01000193);
      h2 = Math.imul(h2 ^ w[i]!, 0x5bd1e995) ^ (h2 >>> 15);
    }
  } else {
    // An Int32Array view must start on a multiple of 4: the same words, put together from bytes (little-endian, as
    // typed arrays are on every platform a browser or Node runs on), so a tensor's hash does not depend on where it sits.
    for (let i = 0; i < words; i++) {
      const j = i * 4;
      const word = b[j]! | (b[j + 1]! << 8) | (b[j + 2]! << 16) | (b[j + 3]! << 24);
      h1 = Math.imul(h1 ^ word, 0x01000193);
      h2 = Math.imul(h2 ^ word, 0x5bd1e995) ^ (h2 >>> 15);
    }
  }
  for (let i = words * 4; i < b.length; i++) {
    h1 = Math.imul(h1 ^ b[i]!, 0x01000193);
    h2 = Math.imul(h2 ^ b[i]!, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return [h1, h2];
}

/** Arrays a memo holds that no one writes into (see `memoSession`'s borrowing), and their byte hashes once known. */
interface Hashes {
  readonly unchanging: WeakSet<object>;
  readonly hashes: WeakMap<object, readonly [number, number]>;
}

/**
 * The lookup key of a run: its fetches, and each feed's name, dims and a hash of its bytes (then compared in full on
 * a hit). An array the memo keeps for a borrowing caller is never written into, so its hash is kept in `known` the
 * first time it is fed: a decoder step's past (the presents of the step before) and an image's cached pixels are
 * not hashed again each time they come back.
 */
function feedKey(feeds: readonly (readonly [string, PlainTensor])[], fetches: string, known: Hashes): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ fetches.length;
  const mix = (x: number) => {
    h1 = Math.imul(h1 ^ x, 0x01000193);
    h2 = Math.imul(h2 ^ x, 0x5bd1e995) ^ (h2 >>> 15);
  };
  for (const [name, t] of feeds) {
    for (let i = 0; i < name.length; i++) mix(name.charCodeAt(i));
    for (const d of t.dims) mix(d);
    let hash = known.hashes.get(t.data);
    if (!hash) {
      hash = dataHash(t);
      if (known.unchanging.has(t.data)) known.hashes.set(t.data, hash);
    }
    const [d1, d2] = hash;
    mix(d1);
    mix(d2);
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
  const known: Hashes = { unchanging: new WeakSet(), hashes: new WeakMap() };
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
      const keep = options?.borrow
        ? (t: PlainTensor) => {
            known.unchanging.add(t.data);
            return t;
          }
        : copy;
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
      const key = feedKey(taken, wanted, known);
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
