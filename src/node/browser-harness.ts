import { build, preview, type PreviewServer } from "vite";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
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

/**
 * Builds the app into a temporary folder (or takes the e2e project's one
 * build, `EVALRX_APP_DIR`), serves it on localhost and opens a
 * Chromium context whose request guard aborts and records any request that
 * would leave the machine (data:/blob: URLs are local by construction).
 */
export async function startBrowserHarness(): Promise<BrowserHarness> {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error("No Chromium: install it with `apt-get install -y chromium` or set CHROMIUM_PATH.");
  // The e2e project builds the app once for every file (src/node/e2e-build.ts); elsewhere, build here.
  const prebuilt = process.env["EVALRX_APP_DIR"];
  const outDir =
    prebuilt && existsSync(join(prebuilt, "index.html")) ? prebuilt : mkdtempSync(join(tmpdir(), "evalrx-app-"));
  if (outDir !== prebuilt) await build({ logLevel: "warn", build: { outDir, emptyOutDir: true } });
  const server: PreviewServer = await preview({ logLevel: "warn", build: { outDir }, preview: { port: 0 } });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error("vite preview did not report a local URL");
  const browser: Browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
  const context = await browser.newContext();
  const foreignRequests: string[] = [];
  await context.route("**/*", (route) => {
    const target = new URL(route.request().url());
    const local = target.protocol === "data:" || target.protocol === "blob:" || LOCAL_HOSTS.has(target.hostname);
    if (local) return route.continue();
    foreignRequests.push(target.href);
    return route.abort("blockedbyclient");
  });
  return {
    url,
    outDir,
    context,
    foreignRequests,
    async close() {
      await browser.close();
      await server.close();
      if (outDir !== prebuilt) rmSync(outDir, { recursive: true, force: true });
    },
  };
}
