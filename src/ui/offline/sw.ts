/// <reference lib="webworker" />
/**
 * EvalRx's service worker: keeps one build of the app (its shell, chunks, the ONNX Runtime wasm, the
 * bundled models, the demo data) so the app starts and runs with the network off, and keeps the model files
 * of served folders the user opened. The build writes it to `sw.js` with that build's precache manifest
 * (`__EVALRX_PRECACHE__`, see src/ui/offline/build-sw.node.ts).
 *
 * Updates never mix builds: each build has its own cache and answers only from it, so a page keeps getting
 * the files it was loaded with. A new build installs beside the old one (copying the files whose bytes did
 * not change, downloading the rest and checking each against its hash), then waits; it takes over only when
 * the user chooses to reload (`skip-waiting`) or every tab of the old build is closed, and then deletes the
 * old build's cache.
 */
import {
  MANIFEST_KEY,
  PRECACHE_PREFIX,
  RUNTIME_CACHE,
  precacheName,
  strategyFor,
  toDownload,
  type PrecacheEntry,
  type PrecacheManifest,
} from "./precache.ts";
import {
  OFFLINE_CHANNEL,
  type BuildAnswer,
  type KeepAnswer,
  type OfflineBroadcast,
  type OfflineRequest,
} from "./messages.ts";

declare const __EVALRX_PRECACHE__: PrecacheManifest;

const sw = self as unknown as ServiceWorkerGlobalScope;
const manifest = __EVALRX_PRECACHE__;
const CACHE = precacheName(manifest.version);
const byUrl = new Map(manifest.entries.map((e) => [e.url, e]));
const channel = new BroadcastChannel(OFFLINE_CHANNEL);
const say = (message: OfflineBroadcast) => channel.postMessage(message);

/**
 * Cross-origin isolation for the page: kept when the host sent it, added when it did not (a static host
 * that sends no headers), so ONNX Runtime keeps its threads when the shell comes from this cache.
 */
const ISOLATION: Record<string, string> = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

/** The server holds another build's file under this build's name. */
class OtherBuildError extends Error {
  override name = "OtherBuildError";
}

/**
 * The response to keep for `entry`, read whole and checked against its revision: a file that is not the
 * one this build names (the host already serves a newer build) is refused, never kept or served.
 */
async function verified(entry: PrecacheEntry, response: Response): Promise<Response> {
  if (!response.ok) {
    const message = `${entry.url}: the server answered ${response.status} ${response.statusText}`;
    // A file this build names that the server no longer has: the server holds another build now.
    throw response.status === 404 ? new OtherBuildError(message) : new Error(message);
  }
  const body = await response.arrayBuffer();
  const revision = hex(await crypto.subtle.digest("SHA-256", body)).slice(0, 16);
  if (revision !== entry.revision)
    throw new OtherBuildError(
      `${entry.url}: the server sent another build's file (hash ${revision}, this build's is ${entry.revision})`,
    );
  // The browser decoded the body: drop the transfer's encoding and length, keep the rest (type, COEP); worker
  // scripts of an isolated page need COEP themselves, so it is added where the host sent none.
  const headers = new Headers(response.headers);
  headers.delete("Content-Encoding");
  headers.set("Content-Length", String(body.byteLength));
  for (const [name, value] of Object.entries(ISOLATION)) if (!headers.has(name)) headers.set(name, value);
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * Fetches one entry, checked against its revision. The browser's HTTP cache is tried first, however old its
 * copy (`force-cache`): what the page fetched moments before the install (the wasm runtime, the model it
 * loaded, the engine check's reference model) is taken from there with nothing on the wire, not even a 304.
 * The revision check is what makes an old copy safe: one that fails it is fetched again from the server.
 */
async function download(entry: PrecacheEntry): Promise<Response> {
  try {
    return await verified(entry, await fetch(entry.url, { cache: "force-cache", credentials: "same-origin" }));
  } catch (error) {
    if (!(error instanceof OtherBuildError)) throw error; // offline, or the server failed: as without the cache
  }
  return verified(entry, await fetch(entry.url, { cache: "no-cache", credentials: "same-origin" }));
}

/** The manifests of the older builds still kept, by cache name. */
async function olderManifests(): Promise<PrecacheManifest[]> {
  const out: PrecacheManifest[] = [];
  for (const name of await caches.keys()) {
    if (!name.startsWith(PRECACHE_PREFIX) || name === CACHE) continue;
    const kept = await (await caches.open(name)).match(MANIFEST_KEY);
    if (kept) out.push((await kept.json()) as PrecacheManifest);
  }
  return out;
}

/**
 * Fills this build's cache: files already in it (an install cut short) stay, unchanged files are copied
 * from an older build's cache, the rest are downloaded four at a time. The manifest is written last, so a
 * cache without it is an install that did not finish.
 */
async function install(): Promise<void> {
  const cache = await caches.open(CACHE);
  const { download: missing, reuse } = toDownload(manifest, await olderManifests());
  const have = new Set((await cache.keys()).map((r) => new URL(r.url).pathname));
  const queue = missing.filter((e) => !have.has(e.url));
  for (const { entry, from } of reuse) {
    if (have.has(entry.url)) continue;
    const old = await (await caches.open(precacheName(from))).match(entry.url);
    if (old) await cache.put(entry.url, old);
    else if (!entry.lazy) queue.push(entry);
  }
  const total = queue.reduce((sum, e) => sum + e.bytes, 0);
  let done = 0;
  say({ type: "progress", version: manifest.version, done, total });
  const next = async (): Promise<void> => {
    for (let entry = queue.shift(); entry; entry = queue.shift()) {
      await cache.put(entry.url, await download(entry));
      done += entry.bytes;
      say({ type: "progress", version: manifest.version, done, total });
    }
  };
  await Promise.all([next(), next(), next(), next()]);
  await cache.put(MANIFEST_KEY, Response.json(manifest));
}

sw.addEventListener("install", (event) => {
  event.waitUntil(
    install().then(
      () => say({ type: "installed", version: manifest.version }),
      (error: unknown) => {
        say({ type: "install-failed", version: manifest.version, message: String((error as Error)?.message ?? error) });
        throw error;
      },
    ),
  );
});

sw.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys())
        if (name.startsWith(PRECACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      // No clients.claim(): a page keeps the controller it was loaded with for its whole life. A first visit's
      // page (and its workers) stays on the network and the copy serves the next load; a page never changes
      // controller mid-session, in the middle of its chunk and model downloads, except when the user chose to
      // switch to a new build (its tabs then reload, see offline.svelte.ts).
      say({ type: "activated", version: manifest.version });
    })(),
  );
});

sw.addEventListener("message", (event) => {
  const request = event.data as OfflineRequest | undefined;
  if (request?.type === "skip-waiting") void sw.skipWaiting();
  else if (request?.type === "build")
    event.ports[0]?.postMessage({ version: manifest.version, appVersion: manifest.appVersion } satisfies BuildAnswer);
  else if (request?.type === "keep" && Array.isArray(request.urls))
    event.waitUntil(keep(request.urls).then((answer) => event.ports[0]?.postMessage(answer)));
});

/**
 * Keeps the files of this build at `urls` that are not kept yet (the page asks for the lazy ones it uses:
 * the WebGPU build once models run on WebGPU), each downloaded — from the HTTP cache when the page fetched it
 * moments before — checked and kept as when first used through the worker. A URL this build does not have is
 * refused; one that cannot be downloaded now (offline) is said and kept the next time it is asked for.
 */
async function keep(urls: readonly unknown[]): Promise<KeepAnswer> {
  const kept: string[] = [];
  const failed: { url: string; message: string }[] = [];
  const cache = await caches.open(CACHE);
  for (const url of urls.slice(0, 16)) {
    const entry = typeof url === "string" ? byUrl.get(url) : undefined;
    if (!entry) {
      failed.push({ url: String(url), message: "not a file of this build" });
      continue;
    }
    try {
      if (!(await cache.match(entry.url))) await keepEntry(entry, cache);
      kept.push(entry.url);
    } catch (error) {
      failed.push({ url: entry.url, message: String((error as Error)?.message ?? error) });
    }
  }
  return { kept, failed };
}

/** The shell (index.html) of this build, with cross-origin isolation; the network when it is not kept. */
async function shell(request: Request): Promise<Response> {
  const kept = await (await caches.open(CACHE)).match("/index.html");
  const response = kept ?? (await fetch(request));
  if (Object.keys(ISOLATION).every((name) => response.headers.has(name))) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) if (!headers.has(name)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** Lazy files being downloaded, by URL: requests that overlap share one download. */
const keeping = new Map<string, Promise<Response>>();

/** Downloads, checks and keeps `entry` (one download however many ask at once); the response kept. */
function keepEntry(entry: PrecacheEntry, cache: Cache): Promise<Response> {
  let pending = keeping.get(entry.url);
  if (!pending) {
    pending = download(entry).then(async (response) => {
      await cache.put(entry.url, response.clone());
      return response;
    });
    keeping.set(entry.url, pending);
    void pending.then(
      () => keeping.delete(entry.url),
      () => keeping.delete(entry.url),
    );
  }
  return pending;
}

/**
 * A built file from this build's cache; a lazy (or evicted) one is downloaded, checked and kept. The
 * download is the worker's own, not the page's request: a page that gives up on it (an engine check that
 * stops early) does not stop it from being kept.
 */
async function precached(event: FetchEvent, entry: PrecacheEntry): Promise<Response> {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(entry.url);
  if (event.request.method === "HEAD") {
    // A size asked for (the Models page): the kept copy's headers, or for a file not kept yet (a lazy one) its
    // size from the manifest; nothing is downloaded for it, and it answers offline too.
    const headers = kept ? kept.headers : { "Content-Length": String(entry.bytes), ...ISOLATION };
    return new Response(null, { status: 200, statusText: "OK", headers });
  }
  if (kept) return kept;
  const pending = keepEntry(entry, cache);
  event.waitUntil(pending.catch(() => undefined));
  try {
    return (await pending).clone();
  } catch (error) {
    if (!(error instanceof OtherBuildError)) throw error; // offline: the request fails as it would without a worker
    return new Response(`${error.message}. A new version of EvalRx was published: reload the page to use it.`, {
      status: 503,
      statusText: "Another build",
      headers: { "Content-Type": "text/plain" },
    });
  }
}

/**
 * A wasm file of the runtime's hashed folder: the network (in practice the HTTP cache, where it is `immutable`
 * and Chromium keeps its compiled code beside it), then the kept copy (offline, or the host no longer has this
 * build). The name fixes the bytes, so the network's answer needs no check; a file not kept yet is kept as well.
 */
async function compiled(event: FetchEvent, entry: PrecacheEntry): Promise<Response> {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(entry.url);
  if (!kept) event.waitUntil(keepEntry(entry, cache).catch(() => undefined));
  try {
    const response = await fetch(event.request);
    // A host that answers a missing file with its index page (against the README's advice) sends HTML: not this file.
    if (response.ok && !/text\/html/.test(response.headers.get("Content-Type") ?? "")) return response;
  } catch {
    // offline: the kept copy answers
  }
  return kept ?? precached(event, entry);
}

/**
 * A file of the build's folders that this build does not have: the server's answer, or a 404 when there is
 * none (offline: a probe for an optional model file gets its 404 there too). A page of another build that
 * this worker took over (a first visit's page, claimed by the build the host published since) so still gets
 * its own build's chunks while the host has them, instead of a 404 that breaks it.
 */
async function missing(request: Request): Promise<Response> {
  try {
    return await fetch(request);
  } catch {
    return new Response(`no such file in this build: ${new URL(request.url).pathname}`, {
      status: 404,
      statusText: "Not Found",
      headers: { "Content-Type": "text/plain", ...ISOLATION },
    });
  }
}

/** A served model file: the network first (a served folder may change), the kept copy when offline. */
async function runtime(event: FetchEvent): Promise<Response> {
  const cache = await caches.open(RUNTIME_CACHE);
  try {
    const response = await fetch(event.request);
    if (response.status === 200 && (response.type === "basic" || response.type === "cors"))
      event.waitUntil(cache.put(event.request, response.clone()).catch(() => undefined));
    return response;
  } catch (error) {
    const kept = await cache.match(event.request);
    if (kept) return kept;
    throw error;
  }
}

sw.addEventListener("fetch", (event) => {
  const strategy = strategyFor(event.request, byUrl, sw.location.origin);
  if (strategy.kind === "shell") event.respondWith(shell(event.request));
  else if (strategy.kind === "precache") event.respondWith(precached(event, strategy.entry));
  else if (strategy.kind === "compiled") event.respondWith(compiled(event, strategy.entry));
  else if (strategy.kind === "missing") event.respondWith(missing(event.request));
  else if (strategy.kind === "runtime") event.respondWith(runtime(event));
});
