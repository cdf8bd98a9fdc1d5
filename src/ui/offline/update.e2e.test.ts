/**
 * A new version, in Debian's Chromium: build A is served and opened in two tabs (its service worker keeps
 * it); build B is swapped in on the same origin (a new entry chunk, a changed model card, everything else
 * unchanged). The open tabs learn of B — "a new version is available — reload" — while they keep getting
 * A's files, including ones the server no longer has; B installs beside A, copying the unchanged files
 * (no wasm downloaded again). Reload in one tab switches both tabs to B, and A's cache is gone.
 *
 * Build B is build A with its entry chunk changed (so renamed, as Vite names chunks by content; the pages'
 * chunks that import it name the new one) and a model card edited, with its service worker written again by the build's own code
 * (src/ui/offline/build-sw.node.ts): the same change a second `vite build` of an edited app makes, in
 * seconds instead of a minute. Set OFFLINE_SCREENS=<dir> to also write screenshots (1280x900).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { preview, type PreviewServer } from "vite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../node/browser-harness.ts";
import { writeServiceWorker } from "./build-sw.node.ts";

const CARD = "models/tiny-vlm/README.md";
const screens = process.env["OFFLINE_SCREENS"];
let harness: BrowserHarness;
let dir: string;
let served: string;
let server: PreviewServer;
let url: string;
let entryA: string;
let entryB: string;
let versionB: string;

/** Replaces what `served` holds with `from`'s files (the host's deploy). */
function deploy(from: string) {
  rmSync(served, { recursive: true, force: true });
  cpSync(from, served, { recursive: true });
}

beforeAll(async () => {
  harness = await startBrowserHarness();
  dir = mkdtempSync(join(tmpdir(), "evalrx-update-e2e-"));
  const a = join(dir, "a");
  const b = join(dir, "b");
  cpSync(harness.outDir, a, { recursive: true });
  cpSync(harness.outDir, b, { recursive: true });
  const html = readFileSync(join(b, "index.html"), "utf8");
  entryA = /<script type="module"[^>]* src="([^"]+)"/.exec(html)![1]!;
  entryB = entryA.replace(/-([\w-]+)\.js$/, "-NEXTbuild.js");
  writeFileSync(join(b, entryA.slice(1)), `${readFileSync(join(b, entryA.slice(1)), "utf8")}\n/* build B */\n`);
  renameSync(join(b, entryA.slice(1)), join(b, entryB.slice(1)));
  rmSync(join(b, `${entryA.slice(1)}.br`), { force: true });
  rmSync(join(b, `${entryA.slice(1)}.gz`), { force: true });
  writeFileSync(join(b, "index.html"), html.replace(entryA, entryB));
  // The pages' chunks import the entry chunk by name: in a real second build they name the new one (and are
  // renamed in turn; here they keep their names with new bytes, so B downloads them and A keeps its own).
  const nameA = entryA.slice(entryA.lastIndexOf("/") + 1);
  const nameB = entryB.slice(entryB.lastIndexOf("/") + 1);
  for (const file of readdirSync(join(b, "assets"))) {
    if (!file.endsWith(".js")) continue;
    const text = readFileSync(join(b, "assets", file), "utf8");
    if (!text.includes(nameA)) continue;
    writeFileSync(join(b, "assets", file), text.replaceAll(nameA, nameB));
    rmSync(join(b, "assets", `${file}.br`), { force: true });
    rmSync(join(b, "assets", `${file}.gz`), { force: true });
  }
  writeFileSync(join(b, CARD), `${readFileSync(join(b, CARD), "utf8")}\nEdited in build B.\n`);
  versionB = (await writeServiceWorker(b, "0.1.0")).version;

  served = join(dir, "served");
  deploy(a);
  server = await preview({ logLevel: "warn", build: { outDir: served }, preview: { port: 0 } });
  url = server.resolvedUrls!.local[0]!;
});
afterAll(async () => {
  await server?.close();
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const entryOf = (page: Page) =>
  page.evaluate(() => new URL(document.querySelector<HTMLScriptElement>("script[type=module][src]")!.src).pathname);
const read = (page: Page, path: string) =>
  page.evaluate(async (p) => {
    const r = await fetch(p);
    return `${r.status} ${await r.text()}`;
  }, path);

it("announces a new build, keeps serving the old one until the user reloads, then switches every tab", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const shot = async (name: string) => {
    if (screens) await page.screenshot({ path: join(screens, `${name}.png`), fullPage: true });
  };
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${url}#/settings`);
  await expect
    .poll(() => page.getByTestId("offline-state").textContent(), { timeout: 120_000 })
    .toMatch(/works offline/);
  // The worker serves the next load (it never takes over a page mid-session): this tab reloads into it.
  await page.reload();
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  await page.getByTestId("offline-caches").waitFor();
  await shot("settings-offline");
  const other = await harness.context.newPage();
  await other.goto(`${url}#/`);
  await other.getByTestId("model-badge").waitFor();
  const cardA = await read(page, `/${CARD}`);
  expect(cardA).not.toContain("Edited in build B");
  expect(await entryOf(page)).toBe(entryA);

  // Build B is published; the open tab checks for it (as it does hourly and whenever it is shown again).
  // What B's worker fetches is counted (A's worker still answers the pages).
  const workerA = harness.context.serviceWorkers().find((w) => w.url().startsWith(url));
  expect(workerA).toBeDefined();
  const downloads: string[] = [];
  harness.context.on("request", (r) => {
    const by = r.serviceWorker();
    if (by && by !== workerA && r.url().startsWith(url)) downloads.push(new URL(r.url()).pathname);
  });
  deploy(join(dir, "b"));
  await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.update());
  await page.getByTestId("update-banner").waitFor({ timeout: 120_000 });
  await other.getByTestId("update-banner").waitFor();
  expect(await page.getByTestId("update-banner").innerText()).toMatch(/A new version of EvalRx is available/);
  await shot("update-banner");
  // "Later" folds the banner into a pill that opens it again.
  await page.getByTestId("update-later").click();
  expect(await page.getByTestId("update-banner").count()).toBe(0);
  await page.getByTestId("update-pill").click();
  await page.getByTestId("update-banner").waitFor();
  // B's worker downloaded what changed and copied the rest from A's cache: no wasm, no model graph again.
  expect(downloads.filter((p) => /\.(wasm|onnx)$/.test(p))).toEqual([]);
  expect(downloads).toContain(entryB);

  // Until the reload, the tabs run A: A's files, even those the server no longer has (A's entry chunk).
  expect(await read(page, `/${CARD}`)).toBe(cardA);
  expect(await read(page, entryA)).toMatch(/^200 /);
  await page.reload();
  await page.getByTestId("model-badge").waitFor();
  expect(await entryOf(page)).toBe(entryA);
  await page.getByTestId("update-banner").waitFor();

  // Reload: B takes over; both tabs reload into it, and A's cache is deleted.
  await Promise.all([other.waitForEvent("load"), page.waitForEvent("load"), page.getByTestId("update-reload").click()]);
  await page.getByTestId("model-badge").waitFor();
  expect(await entryOf(page)).toBe(entryB);
  await expect.poll(() => entryOf(other)).toBe(entryB);
  expect(await read(page, `/${CARD}`)).toContain("Edited in build B");
  expect(await page.getByTestId("update-banner").count()).toBe(0);
  const precaches = (await page.evaluate(() => caches.keys())).filter((k) => k.startsWith("evalrx-precache-"));
  expect(precaches).toEqual([`evalrx-precache-${versionB}`]);
  await page.goto(`${url}#/settings`);
  await expect.poll(() => page.getByTestId("offline-state").textContent()).toContain(versionB);
  expect(errors).toEqual([]);
});
