import { build, preview, type PreviewServer } from "vite";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromiumArgs, chromiumPath } from "./chromium.mjs";

/** The built app served by `vite preview`, a headless system Chromium, and every off-machine request it tried. */
export interface BrowserHarness {
  readonly url: string;
  /** The folder the app was built into (removed on close). */
  readonly outDir: string;
  readonly context: BrowserContext;
  /** URLs of requests to hosts other than localhost; each was aborted. */
  readonly foreignRequests: string[];
  close(): Promise<void>;
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface HarnessOptions {
  /**
   * A browser profile on disk, as a returning user's: its HTTP cache and Chromium's code cache (the compiled
   * WebAssembly) last from one page to the next. The request guard then fails requests that would leave the
   * machine at the host resolver and records them: routing requests, as the default guard does, would switch
   * the HTTP cache off (so every page is a first visit, with the wasm runtime compiled again).
   */
  readonly persistentProfile?: boolean;
  /** A build of the app to serve (another harness's `outDir`), instead of building one. */
  readonly appDir?: string;
}

/**
 * Builds the app into a temporary folder (or takes the e2e project's one
 * build, `EVALRX_APP_DIR`), serves it on localhost and opens a
 * Chromium context whose request guard aborts and records any request that
 * would leave the machine (data:/blob: URLs are local by construction).
 */
export async function startBrowserHarness(options: HarnessOptions = {}): Promise<BrowserHarness> {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error("No Chromium: install it with `apt-get install -y chromium` or set CHROMIUM_PATH.");
  // The e2e project builds the app once for every file (src/node/e2e-build.ts); elsewhere, build here.
  const prebuilt = options.appDir ?? process.env["EVALRX_APP_DIR"];
  const outDir =
    prebuilt && existsSync(join(prebuilt, "index.html")) ? prebuilt : mkdtempSync(join(tmpdir(), "evalrx-app-"));
  if (outDir !== prebuilt) await build({ logLevel: "warn", build: { outDir, emptyOutDir: true } });
  const server: PreviewServer = await preview({ logLevel: "warn", build: { outDir }, preview: { port: 0 } });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error("vite preview did not report a local URL");
  const foreignRequests: string[] = [];
  const isLocal = (target: URL) =>
    target.protocol === "data:" || target.protocol === "blob:" || LOCAL_HOSTS.has(target.hostname);
  let browser: Browser | null;
  let context: BrowserContext;
  const profile = options.persistentProfile ? mkdtempSync(join(tmpdir(), "evalrx-profile-")) : undefined;
  if (profile) {
    const guard = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1";
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      args: [...chromiumArgs, guard],
      headless: true,
    });
    browser = context.browser();
    context.on("request", (request) => {
      const target = new URL(request.url());
      if (!isLocal(target)) foreignRequests.push(target.href);
    });
  } else {
    browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
    context = await browser.newContext();
    await context.route("**/*", (route) => {
      const target = new URL(route.request().url());
      if (isLocal(target)) return route.continue();
      foreignRequests.push(target.href);
      return route.abort("blockedbyclient");
    });
  }
  return {
    url,
    outDir,
    context,
    foreignRequests,
    async close() {
      await context.close();
      await browser?.close();
      await server.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
      if (outDir !== prebuilt) rmSync(outDir, { recursive: true, force: true });
    },
  };
}

/**
 * The folder of a build that holds ONNX Runtime's wasm files, `ort/<hash>/` (vite.config.ts names it by a hash of
 * those files), relative to the build folder.
 *
 * @example builtOrtDir(harness.outDir) // "ort/17ca3709cd68/"
 */
export function builtOrtDir(outDir: string): string {
  const folders = readdirSync(join(outDir, "ort"), { withFileTypes: true }).filter((d) => d.isDirectory());
  if (folders.length !== 1)
    throw new Error(
      `${join(outDir, "ort")}: expected one folder of wasm files named by their hash, found ${folders.length}`,
    );
  return `ort/${folders[0]!.name}/`;
}
