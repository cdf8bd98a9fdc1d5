/**
 * The offline copy's plan, shared by the build (which writes it into `sw.js`),
 * the service worker (which follows it) and the Settings page (which reports
 * on it). Pure: no DOM, no Node, no service-worker globals, so it is tested in
 * Node.
 */

/** One built file the service worker keeps: its URL path, a hash of its bytes, its size. */
export interface PrecacheEntry {
  /** The path the app requests, from the site root (`/assets/index-BspxSx0o.js`). */
  readonly url: string;
  /** The first 16 hex digits of the SHA-256 of the built file (`revision` changes ⇔ the bytes changed). */
  readonly revision: string;
  readonly bytes: number;
  /**
   * Kept the first time it is used through the worker, or when the page asks for it (the `keep` message), not
   * at install: the WebGPU build's wasm (27 MB, 5.0 MB compressed; WebGPU and transformers.js) would double
   * the first visit, and the app runs without it (never fetched without a hardware adapter: the engine check
   * leaves a software one out). The page asks for it once models run on WebGPU (measured faster, or chosen in
   * Settings) or through transformers.js, so it is there offline too. So
   * are the model files the app never reads by itself: a model folder that is not one of the app's bundled
   * models (planted-vlm, the L4 study model) and the `*_untapped.onnx` graphs (the forge's copies without
   * attention outputs, read by Node benches): 2.7 MB compressed a first visit would otherwise save unused.
   */
  readonly lazy?: true;
}

/** What one build of the app keeps offline. `version` names the build (a hash of every entry). */
export interface PrecacheManifest {
  readonly version: string;
  /** The app's package version, shown beside the build. */
  readonly appVersion: string;
  readonly entries: readonly PrecacheEntry[];
}

/** The Cache Storage names the service worker owns (one precache per build; the runtime cache across builds). */
export const PRECACHE_PREFIX = "evalrx-precache-";
export const RUNTIME_CACHE = "evalrx-runtime-v1";
/** Where, in each precache, its own manifest is kept (never fetched): the next build copies unchanged files by it. */
export const MANIFEST_KEY = "/__evalrx/precache-manifest.json";

/** The precache of build `version`. */
export const precacheName = (version: string) => `${PRECACHE_PREFIX}${version}`;

/** Built files that are not the app: the precompressed twins (the browser gets them decoded) and the worker itself. */
const NOT_KEPT = /(\.br|\.gz|\.map)$|^sw\.js$/;
/** Built files kept when first used (see `PrecacheEntry.lazy`). */
const LAZY = /^ort\/(?:[^/]+\/)?ort-wasm-simd-threaded\.(asyncify|jsep|jspi)\.wasm$|^models\/.*_untapped\.onnx$/;
/** A file of a model folder: its folder's name. */
const MODEL_FOLDER = /^models\/([^/]+)\//;

/**
 * Which of a build's files go into its offline copy, and the build's version: every file but the
 * precompressed twins, source maps and `sw.js`, sorted by URL; ONNX Runtime's wasm builds for WebGPU and
 * the model files the app does not read by itself are marked lazy (`appModels` names the model folders the
 * app loads, its bundled models; every other folder under `models/` is lazy, and so is every
 * `*_untapped.onnx`; without `appModels`, every folder is the app's). `files` are paths relative to the
 * build folder; `digest` hashes text to hex (the build's SHA-256), naming the build.
 *
 * @example
 * precacheManifest([{ path: "index.html", bytes: 900, hash: "a1b2c3d4e5f60718" }], "0.1.0", sha256Hex, ["tiny-vlm"])
 * // → { version: "…16 hex…", appVersion: "0.1.0", entries: [{ url: "/index.html", revision: "a1…", bytes: 900 }] }
 */
export function precacheManifest(
  files: readonly { readonly path: string; readonly bytes: number; readonly hash: string }[],
  appVersion: string,
  digest: (text: string) => string,
  appModels?: readonly string[],
): PrecacheManifest {
  if (appModels && appModels.some((name) => !name || name.includes("/")))
    throw new Error(`precacheManifest: appModels must be model folder names, got ${JSON.stringify(appModels)}`);
  const entries: PrecacheEntry[] = [];
  for (const file of files) {
    const path = file.path.replaceAll("\\", "/").replace(/^\/+/, "");
    if (!path || path.split("/").includes(".."))
      throw new Error(`precacheManifest: '${file.path}' is not a path inside the build`);
    if (!/^[0-9a-f]{16,}$/.test(file.hash))
      throw new Error(`precacheManifest: '${file.path}' has no hex hash (got '${file.hash}')`);
    if (NOT_KEPT.test(path)) continue;
    entries.push({
      url: `/${path}`,
      revision: file.hash.slice(0, 16),
      bytes: file.bytes,
      ...(LAZY.test(path) || notTheApps(path, appModels) ? { lazy: true as const } : {}),
    });
  }
  entries.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  if (!entries.some((e) => e.url === "/index.html"))
    throw new Error("precacheManifest: the build has no index.html, so the app could not start offline");
  const version = digest(entries.map((e) => `${e.url} ${e.revision}`).join("\n")).slice(0, 16);
  return { version, appVersion, entries };
}

/** A file of a model folder the app never loads by itself (see `precacheManifest`). */
function notTheApps(path: string, appModels: readonly string[] | undefined): boolean {
  const folder = MODEL_FOLDER.exec(path)?.[1];
  return !!folder && !!appModels && !appModels.includes(folder);
}

/** How the service worker answers a request. */
export type Strategy =
  /** A page load of the app: the build's own index.html, from its precache. */
  | { readonly kind: "shell" }
  /**
   * A built file: from this build's precache (a lazy one is fetched and kept the first time). A HEAD
   * request (the Models page asks the bundled files' sizes) gets the kept copy's headers.
   */
  | { readonly kind: "precache"; readonly entry: PrecacheEntry }
  /**
   * A wasm file of the runtime's hashed folder (`/ort/<hash>/…`, bytes fixed by its name): the browser's own
   * fetch first, answered from its HTTP cache, beside which Chromium keeps the machine code it compiled (a
   * response made by the worker would have to be compiled again on every page load); the kept copy when that
   * fails (offline).
   */
  | { readonly kind: "compiled"; readonly entry: PrecacheEntry }
  /**
   * A path of the build's own folders (`/assets/`, `/ort/`, `/models/`) that this build does not have: the
   * server's answer online (a page of another build still gets its files), a 404 offline.
   */
  | { readonly kind: "missing" }
  /** A model file from a served folder: the network first, the kept copy when offline. */
  | { readonly kind: "runtime" }
  /** Anything else (the hub, the companion, data: URLs, POSTs): not touched by the service worker. */
  | { readonly kind: "network" };

/** The wasm runtime's files, under the folder named by their hash (see `Strategy`, "compiled"). */
const COMPILED = /^\/ort\/[0-9a-f]{12}\/[^/]+\.wasm$/;
/** The folders whose every file the build lists. */
const BUILT_FOLDER = /^\/(assets|ort|models)\//;
/** Files of a model folder served from a URL (configs, tokenizers, graphs, external weights). */
const MODEL_FILE = /\.(onnx|onnx_data|json|txt|model|safetensors)$/;
/**
 * The hub's file layout (`<owner>/<name>/resolve/<rev>/<file>`) and API: the model worker keeps those files
 * itself (with their 404s) in its own cache, so keeping them here too would store every hub model twice.
 */
const HUB_LAYOUT = /\/resolve\/[^/]+\/|\/api\/models\//;

/**
 * How the service worker of `manifest`, whose scope is `origin`, answers a request. Precached files are
 * matched by path alone (the app never adds a query to them), for GET and HEAD; a navigation inside the
 * scope gets the shell (hash routes all live in index.html). Other methods go to the network.
 *
 * @example
 * strategyFor({ url: "http://localhost:4173/#/runs", method: "GET", mode: "navigate" }, manifest, "http://localhost:4173")
 * // → { kind: "shell" }
 */
export function strategyFor(
  request: { readonly url: string; readonly method: string; readonly mode: string },
  byUrl: ReadonlyMap<string, PrecacheEntry>,
  origin: string,
): Strategy {
  const head = request.method === "HEAD";
  if (request.method !== "GET" && !head) return { kind: "network" };
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { kind: "network" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { kind: "network" };
  const sameOrigin = url.origin === origin;
  if (sameOrigin) {
    const path = decodeURIComponent(url.pathname);
    if (request.mode === "navigate" && !head && (path === "/" || path === "/index.html")) return { kind: "shell" };
    const entry = byUrl.get(path);
    if (entry && !url.search)
      return !head && COMPILED.test(path) ? { kind: "compiled", entry } : { kind: "precache", entry };
    // The build knows every file of its own folders: a probe for an optional model file gets its 404 offline too.
    if (BUILT_FOLDER.test(path) && !entry) return { kind: "missing" };
  }
  if (MODEL_FILE.test(url.pathname) && !HUB_LAYOUT.test(url.pathname) && request.mode !== "navigate" && !head)
    return { kind: "runtime" };
  return { kind: "network" };
}

/**
 * The entries a new build must download: those whose revision no older precache holds.
 *
 * @example
 * toDownload(next, [previous]) // next.entries minus those previous kept with the same revision
 */
export function toDownload(
  next: PrecacheManifest,
  older: readonly PrecacheManifest[],
): { readonly download: PrecacheEntry[]; readonly reuse: { entry: PrecacheEntry; from: string }[] } {
  const have = new Map<string, string>();
  for (const manifest of older) for (const e of manifest.entries) have.set(`${e.url} ${e.revision}`, manifest.version);
  const download: PrecacheEntry[] = [];
  const reuse: { entry: PrecacheEntry; from: string }[] = [];
  for (const entry of next.entries) {
    const from = have.get(`${entry.url} ${entry.revision}`);
    if (from) reuse.push({ entry, from });
    else if (!entry.lazy) download.push(entry);
  }
  return { download, reuse };
}
