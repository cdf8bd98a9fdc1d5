import { MANIFEST_KEY, PRECACHE_PREFIX, RUNTIME_CACHE, type PrecacheManifest } from "./precache.ts";
import {
  OFFLINE_CHANNEL,
  type BuildAnswer,
  type KeepAnswer,
  type OfflineBroadcast,
  type OfflineRequest,
} from "./messages.ts";

/** Where the offline copy stands, as the page shows it. */
export type OfflineState =
  /** No service worker here: the dev server, a browser without them, or a private window that refuses them. */
  | { readonly kind: "unavailable"; readonly why: string }
  | { readonly kind: "starting" }
  /** The first copy is being saved (`done` of `total` bytes to download). */
  | { readonly kind: "saving"; readonly done: number; readonly total: number }
  /** This page's build is kept: the app works offline. */
  | { readonly kind: "ready"; readonly version: string }
  | { readonly kind: "failed"; readonly message: string }
  /** The user removed the offline copy; the next visit saves it again. */
  | { readonly kind: "cleared" };

/** One cache of the offline copy, for the Settings page. */
export interface CacheUsage {
  readonly name: string;
  /** What it holds, in words. */
  readonly what: string;
  readonly files: number;
  readonly bytes: number;
}

/**
 * The longest a first visit waits for the page's startup downloads before saving the offline copy anyway (a
 * model worker that never answers must not keep the app from working offline).
 */
const FIRST_SAVE_WAIT_MS = 60_000;

/** How often an open tab asks the server whether a new build was published. */
const UPDATE_CHECK_MS = 60 * 60 * 1000;

/**
 * The page's side of the service worker (src/ui/offline/sw.ts): registers it, follows its install,
 * announces a new build ("a new version is available — reload") and switches to it only when the user
 * asks, and reports and clears what is kept. One per page (`offline`, below).
 */
export class OfflineService {
  state = $state.raw<OfflineState>({ kind: "starting" });
  /** A new build is installed and waiting: reloading switches to it. */
  updateReady = $state(false);
  /** The new build being downloaded while the old one keeps running (bytes), if any. */
  updateProgress = $state.raw<{ readonly done: number; readonly total: number } | undefined>();
  /** The last `keep` request's answer: the files kept, and why any other was not. */
  keptLazy = $state.raw<KeepAnswer | undefined>();
  #registration: ServiceWorkerRegistration | undefined;
  #reloading = false;
  /** Lazy files of the build the page uses (see `keep`), asked of the service worker once it is active. */
  readonly #wanted = new Set<string>();
  #asked = new Set<string>();

  /**
   * Registers the service worker: once the page has loaded, so it never competes with the first paint, and on
   * a first visit (no worker yet) once `startupDone` settles too (at most `FIRST_SAVE_WAIT_MS` later): the
   * page's own downloads (the wasm runtime, a model it loads) are then in the HTTP cache, where the install
   * takes them from, instead of being downloaded a second time beside the page's still running fetch.
   */
  async start(startupDone?: Promise<unknown>): Promise<void> {
    // The dev server (and Vitest's browser mode) has hot reload and no sw.js; a build has neither. (Not
    // `import.meta.env.DEV`: a build made under Vitest, as the e2e tests' is, has NODE_ENV=test and DEV true.)
    if (import.meta.hot) {
      this.state = { kind: "unavailable", why: "the dev server runs without it (a built app has it: npm start)" };
      return;
    }
    if (!("serviceWorker" in navigator)) {
      this.state = { kind: "unavailable", why: "this browser has no service workers (or they are off here)" };
      return;
    }
    const container = navigator.serviceWorker;
    const hadController = !!container.controller;
    new BroadcastChannel(OFFLINE_CHANNEL).onmessage = (event) => this.#heard(event.data as OfflineBroadcast);
    container.addEventListener("controllerchange", () => {
      // A new build took over this tab (this tab's reload button, or another tab's): files of the old build
      // are gone from the cache, so this page reloads rather than fetch new files into an old page.
      if (this.#reloading || hadController) {
        this.#reloading = true;
        location.reload();
        return;
      }
      void this.#checkClaim();
    });
    if (document.readyState !== "complete") await new Promise((done) => addEventListener("load", done, { once: true }));
    if (!hadController && startupDone)
      await Promise.race([
        startupDone.catch(() => undefined),
        new Promise((done) => setTimeout(done, FIRST_SAVE_WAIT_MS)),
      ]);
    try {
      const registration = await container.register(`${import.meta.env.BASE_URL}sw.js`, {
        scope: import.meta.env.BASE_URL,
        updateViaCache: "none",
      });
      this.#registration = registration;
      this.#follow(registration);
      if (registration.active) await this.#checkClaim(container.controller ?? registration.active);
      setInterval(() => void registration.update().catch(() => undefined), UPDATE_CHECK_MS);
      document.addEventListener("visibilitychange", () => {
        if (document.visibilityState === "visible") void registration.update().catch(() => undefined);
      });
    } catch (error) {
      this.state = { kind: "failed", message: `the service worker could not be registered: ${String(error)}` };
    }
  }

  /**
   * Asks the offline copy to keep files of this build that it keeps only when used (`PrecacheEntry.lazy`:
   * ONNX Runtime's WebGPU build), because the page now uses them: a page the service worker does not control
   * (a first visit) fetched them past it, and one that goes offline before using them would lack them. Asked
   * now when the worker is active, else once it is; nothing without an offline copy (the files are fetched
   * when first used, as without one).
   *
   * @example offline.keep(["/ort/ort-wasm-simd-threaded.asyncify.wasm"])
   */
  keep(urls: readonly string[]): void {
    for (const url of urls) this.#wanted.add(url);
    this.#askKeep();
  }

  #askKeep(): void {
    const worker = this.#registration?.active;
    const urls = [...this.#wanted].filter((url) => !this.#asked.has(url));
    if (!worker || !urls.length) return;
    for (const url of urls) this.#asked.add(url);
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => {
      const answer = event.data as KeepAnswer;
      this.keptLazy = answer;
      // One not kept now (offline, or the server failed) is asked for again with the next request.
      for (const { url } of answer.failed ?? []) this.#asked.delete(url);
    };
    worker.postMessage({ type: "keep", urls } satisfies OfflineRequest, [channel.port2]);
  }

  /** Watches installs: a waiting worker while a controller exists is a new build. */
  #follow(registration: ServiceWorkerRegistration): void {
    const check = () => {
      if (registration.waiting && navigator.serviceWorker.controller) {
        this.updateReady = true;
        this.updateProgress = undefined;
      }
    };
    check();
    registration.addEventListener("updatefound", () => {
      const worker = registration.installing;
      worker?.addEventListener("statechange", () => {
        check();
        if (worker.state === "activated" && this.state.kind !== "ready") void this.#checkClaim(worker);
      });
    });
  }

  #heard(message: OfflineBroadcast): void {
    if (!message || typeof message !== "object") return;
    const updating = !!navigator.serviceWorker.controller;
    if (message.type === "progress") {
      if (updating && this.state.kind === "ready" && this.state.version !== message.version)
        this.updateProgress = { done: message.done, total: message.total };
      else if (!updating) this.state = { kind: "saving", done: message.done, total: message.total };
    } else if (message.type === "install-failed") {
      if (updating) this.updateProgress = undefined;
      else this.state = { kind: "failed", message: message.message };
    }
  }

  /** Asks a worker which build it is. */
  #ask(worker: ServiceWorker): Promise<BuildAnswer> {
    return new Promise((done, fail) => {
      const channel = new MessageChannel();
      const timer = setTimeout(() => fail(new Error("the service worker did not answer")), 5000);
      channel.port1.onmessage = (event) => {
        clearTimeout(timer);
        done(event.data as BuildAnswer);
      };
      worker.postMessage({ type: "build" } satisfies OfflineRequest, [channel.port2]);
    });
  }

  /**
   * The worker that controls this page, or the one a first visit just installed (which serves the next
   * load): is it of the build the page was loaded from? A first visit's page came from the network; if the
   * host published a newer build in between, the worker's cache is that build's, so the page offers a reload.
   */
  async #checkClaim(worker = navigator.serviceWorker.controller): Promise<void> {
    if (!worker) return;
    try {
      const build = await this.#ask(worker);
      const kept = await caches.match(MANIFEST_KEY, { cacheName: `${PRECACHE_PREFIX}${build.version}` });
      const manifest = kept ? ((await kept.json()) as PrecacheManifest) : undefined;
      const entry = document.querySelector<HTMLScriptElement>("script[type=module][src]")?.src;
      const mine = entry ? new URL(entry).pathname : undefined;
      if (manifest && mine && !manifest.entries.some((e) => e.url === mine)) this.updateReady = true;
      this.state = { kind: "ready", version: build.version };
      this.#askKeep();
    } catch (error) {
      this.state = { kind: "failed", message: String((error as Error)?.message ?? error) };
    }
  }

  /** Switches to the new build: the waiting worker takes over and every tab of the app reloads into it. */
  reload(): void {
    this.#reloading = true;
    const waiting = this.#registration?.waiting;
    if (waiting) waiting.postMessage({ type: "skip-waiting" } satisfies OfflineRequest);
    else location.reload();
  }

  /** What the offline copy keeps, per cache (this build's files; model files of served folders). */
  async usage(): Promise<CacheUsage[]> {
    if (typeof caches === "undefined") return [];
    const out: CacheUsage[] = [];
    for (const name of await caches.keys()) {
      if (!name.startsWith(PRECACHE_PREFIX) && name !== RUNTIME_CACHE) continue;
      const cache = await caches.open(name);
      let files = 0;
      let bytes = 0;
      for (const request of await cache.keys()) {
        if (new URL(request.url).pathname === MANIFEST_KEY) continue;
        const response = await cache.match(request);
        files++;
        bytes += Number(response?.headers.get("Content-Length") ?? 0) || (await response?.blob())?.size || 0;
      }
      const what =
        name === RUNTIME_CACHE
          ? "model files of served folders you opened"
          : `the app, build ${name.slice(PRECACHE_PREFIX.length)} (shell, ONNX Runtime, bundled models, demo data)`;
      out.push({ name, what, files, bytes });
    }
    return out;
  }

  /** Removes the offline copy (both caches) and the service worker; the next visit saves it again. */
  async clear(): Promise<void> {
    const registrations = "serviceWorker" in navigator ? await navigator.serviceWorker.getRegistrations() : [];
    await Promise.all(registrations.map((r) => r.unregister()));
    for (const name of await caches.keys())
      if (name.startsWith(PRECACHE_PREFIX) || name === RUNTIME_CACHE) await caches.delete(name);
    this.updateReady = false;
    this.updateProgress = undefined;
    this.#asked.clear();
    this.keptLazy = undefined;
    this.state = { kind: "cleared" };
  }
}

/** The page's one offline service (started by main.ts in a built app). */
export const offline = new OfflineService();
