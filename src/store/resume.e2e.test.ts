import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { chromiumArgs, chromiumPath } from "../node/chromium.mjs";

// Closes a tab in the middle of a run that writes to IndexedDB, twice, then lets a third tab finish it.

let server: ViteDevServer;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error("No Chromium: install it with `apt-get install -y chromium` or set CHROMIUM_PATH.");
  server = await createServer({
    logLevel: "warn",
    server: { port: 0, host: "localhost" },
    // Pre-bundled up front, so the dev server never reloads the page mid-run to add them.
    optimizeDeps: { include: ["idb", "@noble/hashes/sha2.js", "@noble/hashes/utils.js"] },
  });
  await server.listen();
  browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
  context = await browser.newContext();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface PageState {
  started: number;
  done: number;
  finished: boolean;
  error?: string;
  indexes?: number[];
  progress?: unknown;
}

const state = (page: Page) => page.evaluate(() => (window as unknown as { __evalrx?: PageState }).__evalrx);

it("a tab closed mid-run resumes in a new tab from its first unjudged item; every case is judged exactly once; a second tab is refused", async () => {
  const total = 100;
  const url = `${server.resolvedUrls!.local[0]}src/store/resume-page.html?db=resume-${Date.now()}&total=${total}&delay=5`;
  const errors: string[] = [];
  for (const closeAfter of [10, 45]) {
    const page = await context.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(url);
    await page.waitForFunction(
      (k) => ((window as unknown as { __evalrx?: PageState }).__evalrx?.done ?? 0) >= k,
      closeAfter,
      { timeout: 60_000 },
    );
    const before = await state(page);
    expect(before!.finished).toBe(false);
    // A second tab on the same run while this one writes: refused up front by the Web Lock, judging nothing.
    // The first tab waits (a pause flag in localStorage) until the rival has been answered.
    await page.evaluate((db) => localStorage.setItem(`${db}:pause`, "1"), new URL(url).searchParams.get("db")!);
    const rival = await context.newPage();
    await rival.goto(url);
    await rival.waitForFunction(() => (window as unknown as { __evalrx?: PageState }).__evalrx?.error, undefined, {
      timeout: 60_000,
    });
    const refused = await state(rival);
    expect(refused!.error).toMatch(/^run 'resumable' already has a writer: another tab or worker of this page/);
    expect(refused!.started).toBe(-1);
    await rival.close();
    await page.evaluate((db) => localStorage.removeItem(`${db}:pause`), new URL(url).searchParams.get("db")!);
    await page.close(); // the tab goes away mid-run, with a transaction possibly in flight
  }
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(url);
  await page.waitForFunction(
    () => {
      const s = (window as unknown as { __evalrx?: PageState }).__evalrx;
      return !!s && (s.finished || !!s.error);
    },
    undefined,
    { timeout: 60_000 },
  );
  const final = await state(page);
  expect(final!.error).toBeUndefined();
  expect(await page.getByText(`finished ${total}`).count()).toBe(1);

  const seen = await page.evaluate((db) => {
    const read = (key: string) => JSON.parse(localStorage.getItem(`${db}:${key}`) ?? "[]") as number[];
    const s = (window as unknown as { __evalrx: PageState }).__evalrx;
    return { indexes: s.indexes, progress: s.progress, starts: read("starts"), judged: read("judged") };
  }, new URL(url).searchParams.get("db")!);

  expect(seen.indexes).toEqual(Array.from({ length: total }, (_, i) => i));
  expect(seen.progress).toMatchObject({ done: total, total });
  // Three tabs: the first from 0, each later one from where the closed one had stored up to.
  expect(seen.starts).toHaveLength(3);
  expect(seen.starts[0]).toBe(0);
  expect(seen.starts[1]).toBeGreaterThanOrEqual(10);
  expect(seen.starts[2]).toBeGreaterThanOrEqual(45);
  // A judgement cut off before its transaction committed is redone (at most one per closed tab).
  expect(seen.judged.length).toBeLessThanOrEqual(total + 2);
  expect(new Set(seen.judged).size).toBe(total);
  expect(errors).toEqual([]);
});
