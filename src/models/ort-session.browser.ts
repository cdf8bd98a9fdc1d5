import { concatBytes } from "../core/bytes.ts";
import { ORT_BUILDS } from "./ort-env.browser.ts";
import { MissingFileError, wrapOrtSession, type FileSource, type SessionFactory } from "./session.ts";
import { memoSessions, type SessionMemoOptions } from "./session-memo.ts";

/**
 * Sessions on onnxruntime-web: the WASM execution provider on the plain WASM
 * build (no asyncify instrumentation: the fastest on the CPU), WebGPU on the
 * WebGPU build (the asyncify one transformers.js uses too). Call
 * `configureOrtWasm()` first so the wasm comes from the app's own `/ort/`.
 * With `memo`, a run repeating an earlier one's feeds is answered from memory
 * (`memoSessions`): what a model runs for jobs; not what a timing check runs.
 *
 * @example
 * const sessions = webSessions("wasm", { memo: true });
 * const session = await sessions(bytes, { name: "onnx/model.onnx" });
 */
export function webSessions(
  device: "webgpu" | "wasm",
  options: { readonly memo?: boolean | SessionMemoOptions } = {},
): SessionFactory {
  const ort = ORT_BUILDS[device];
  const plain: SessionFactory = async (bytes) => {
    const session = await ort.InferenceSession.create(bytes, { executionProviders: [device] });
    return wrapOrtSession(session, (t) => new ort.Tensor(t.type, t.data as never, t.dims));
  };
  if (!options.memo) return plain;
  return memoSessions(plain, options.memo === true ? {} : options.memo);
}

/** One model file's transfer, for a progress bar per file. */
export interface FileProgress {
  /** The file, relative to the model folder ("onnx/model.onnx"). */
  readonly path: string;
  /** Bytes read so far. */
  readonly loaded: number;
  /** Bytes expected (the server's Content-Length), when it says. */
  readonly total?: number;
  /** True when the file came from the browser's cache: nothing was downloaded. */
  readonly cached: boolean;
  /** True once the file is read whole (or known to be missing). */
  readonly done: boolean;
  /** True when the file is not there (a 404: optional files may be missing). */
  readonly missing?: boolean;
}

/** How `fetchFiles` and `cachedFetch` keep files and report on them. */
export interface FetchFilesOptions {
  /**
   * A Cache Storage name: files (and 404s) are kept there, so a second load
   * reads nothing from the network. Absent: the browser's HTTP cache only.
   */
  readonly cache?: string;
  /** Called as each file's bytes arrive (and once when it is done). */
  readonly onFile?: (progress: FileProgress) => void;
}

/** The header a cached 404 carries, so a kept "missing" is told from a real response. */
const MISSING = "X-EvalRx-Missing";

/** A 200 whose body is an HTML page, where a model file should be: a server's fallback page, never a model file. */
function isFallbackPage(response: Response): boolean {
  return response.ok && (response.headers.get("Content-Type") ?? "").startsWith("text/html");
}

/** Reads a body whole, reporting bytes as they arrive. */
async function readBody(response: Response, report: (loaded: number) => void): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    report(loaded);
  }
  return concatBytes(chunks);
}

/**
 * Fetches `url` through a Cache Storage cache: a hit (a file, or a 404 kept
 * from before) is answered from the cache without touching the network; a
 * miss is downloaded with progress and kept — 200s whole, 404s as "missing" —
 * so a model loads a second time with no request at all. Other failures are
 * returned as they came and not kept.
 *
 * @example
 * const response = await cachedFetch("https://huggingface.co/owner/name/resolve/main/config.json", "evalrx-hub");
 */
export async function cachedFetch(
  url: string,
  cacheName: string,
  onProgress?: (progress: Omit<FileProgress, "path">) => void,
): Promise<Response> {
  const cache = await caches.open(cacheName);
  const hit = await cache.match(url);
  if (hit) {
    const missing = hit.headers.has(MISSING);
    const size = Number(hit.headers.get("Content-Length") ?? NaN);
    onProgress?.({
      loaded: missing ? 0 : size,
      ...(Number.isFinite(size) ? { total: size } : {}),
      cached: true,
      done: true,
      ...(missing ? { missing } : {}),
    });
    return missing ? new Response(null, { status: 404, statusText: "Not Found (cached)" }) : hit;
  }
  const response = await fetch(url);
  if (response.status === 404) {
    onProgress?.({ loaded: 0, cached: false, done: true, missing: true });
    await cache.put(url, new Response(null, { status: 404, headers: { [MISSING]: "1" } }));
    return response;
  }
  if (!response.ok || isFallbackPage(response)) return response;
  const length = Number(response.headers.get("Content-Length") ?? NaN);
  const total = Number.isFinite(length) ? { total: length } : {};
  const bytes = await readBody(response, (loaded) => onProgress?.({ loaded, ...total, cached: false, done: false }));
  onProgress?.({ loaded: bytes.length, total: bytes.length, cached: false, done: true });
  const headers = {
    "Content-Type": response.headers.get("Content-Type") ?? "application/octet-stream",
    "Content-Length": String(bytes.length),
  };
  await cache.put(url, new Response(bytes as BufferSource, { headers }));
  return new Response(bytes as BufferSource, { headers });
}

/**
 * The files kept in a Cache Storage cache under `prefix`, with their sizes
 * (kept 404s left out).
 *
 * @example
 * await cachedFiles("evalrx-hub", "https://huggingface.co/owner/name/resolve/main/") // → [{ path: "config.json", bytes: 855 }, …]
 */
export async function cachedFiles(cacheName: string, prefix: string): Promise<{ path: string; bytes: number }[]> {
  const cache = await caches.open(cacheName);
  const out: { path: string; bytes: number }[] = [];
  for (const request of await cache.keys()) {
    if (!request.url.startsWith(prefix)) continue;
    const response = await cache.match(request);
    if (!response || response.headers.has(MISSING)) continue;
    out.push({ path: request.url.slice(prefix.length), bytes: Number(response.headers.get("Content-Length") ?? 0) });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Model files fetched from a URL prefix (the app's `/models/<key>/`, or a hub
 * `…/resolve/main/`). A 404 — or an HTML page where a model file should be —
 * is a missing file, never a model. With `cache`, files are kept in Cache
 * Storage (see `cachedFetch`); `onFile` reports each file's bytes.
 *
 * @example
 * await fetchFiles("/models/tiny-vlm/")("config.json") // → Uint8Array(…)
 */
export function fetchFiles(base: string, options: FetchFilesOptions = {}): FileSource {
  const prefix = base.endsWith("/") ? base : `${base}/`;
  return async (path) => {
    const url = `${prefix}${path}`;
    const report = (p: Omit<FileProgress, "path">) => options.onFile?.({ path, ...p });
    const response = options.cache ? await cachedFetch(url, options.cache, report) : await fetch(url);
    if (response.status === 404 || isFallbackPage(response)) {
      if (!options.cache) report({ loaded: 0, cached: false, done: true, missing: true });
      throw new MissingFileError(path, prefix);
    }
    if (!response.ok) throw new Error(`fetching model file ${url} failed: HTTP ${response.status}`);
    if (options.cache) return new Uint8Array(await response.arrayBuffer());
    const length = Number(response.headers.get("Content-Length") ?? NaN);
    const total = Number.isFinite(length) ? { total: length } : {};
    const bytes = await readBody(response, (loaded) => report({ loaded, ...total, cached: false, done: false }));
    report({ loaded: bytes.length, total: bytes.length, cached: false, done: true });
    return bytes;
  };
}

/**
 * Model files from a dropped folder: `<input webkitdirectory>` files (their
 * `webkitRelativePath` starts with the folder name, which is stripped) or a
 * map built from a File System Access directory handle. It can list its
 * files, so finding a model's layout reads nothing.
 */
export function droppedFiles(files: Iterable<File> | ReadonlyMap<string, Blob>): FileSource {
  const byPath = new Map<string, Blob>();
  if (files instanceof Map) for (const [path, blob] of files) byPath.set(path, blob);
  else
    for (const file of files as Iterable<File>) {
      const rel = file.webkitRelativePath || file.name;
      byPath.set(rel.includes("/") ? rel.slice(rel.indexOf("/") + 1) : rel, file);
    }
  const read = async (path: string) => {
    const blob = byPath.get(path);
    if (!blob) throw new MissingFileError(path, "the dropped folder");
    return new Uint8Array(await blob.arrayBuffer());
  };
  return Object.assign(read, { list: async () => [...byPath.keys()].sort() });
}

/** Walks a File System Access directory handle into a path → File map (for `droppedFiles`). */
export async function filesOfDirectory(handle: FileSystemDirectoryHandle, prefix = ""): Promise<Map<string, Blob>> {
  const out = new Map<string, Blob>();
  for await (const [name, entry] of (
    handle as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }
  ).entries()) {
    if (entry.kind === "file") out.set(`${prefix}${name}`, await (entry as FileSystemFileHandle).getFile());
    else
      for (const [p, f] of await filesOfDirectory(entry as FileSystemDirectoryHandle, `${prefix}${name}/`))
        out.set(p, f);
  }
  return out;
}
