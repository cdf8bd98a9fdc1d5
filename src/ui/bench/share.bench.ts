/**
 * bench:app's share numbers: how long the 600-case demo investigation report's link takes from being opened
 * to its report being on screen (hypotheses table drawn), in an open app (a link pasted into the address
 * bar of a running tab changes only the fragment) and as a fresh page load (a link clicked elsewhere): by a
 * colleague who never opened the app (a new browser profile: empty caches, no service worker), and by a
 * returning user (the offline copy saved and serving the app, as after any earlier visit). A share view runs
 * no model, so neither load starts the model worker or fetches the wasm runtime (counted and printed). Also
 * how big the link is. Measured for the synthetic 600-case demo report (src/share/fixtures.ts) and a real
 * report the CLI wrote: `EVALRX_BENCH_REPORT=path/report.json` (bench:app's 600-case investigation), else
 * the committed 200-case one (src/report/fixtures/cli-report-200.json).
 */
import type { Page } from "playwright-core";
import type { BrowserHarness } from "../../node/browser-harness.ts";
import { readFileSync } from "node:fs";
import { parseReport, type Report } from "../../report/schema.ts";
import { demoReport } from "../../share/fixtures.ts";
import { reportLink, shareUrl } from "../../share/index.ts";
import { offlineCopyActive } from "./delivery.bench.ts";

const ms = (x: number) => `${x.toFixed(0)} ms`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const RENDERED = '[data-testid="shared-report-hypotheses"] tbody tr';

/** Sets the fragment in the page and waits, frame by frame, for the report; the time it took (ms). */
function openInApp(page: Page, hash: string): Promise<number> {
  return page.evaluate(
    ({ hash, selector }) =>
      new Promise<number>((done, fail) => {
        const t0 = performance.now();
        location.hash = hash;
        const check = () => {
          if (document.querySelector(selector)) return done(performance.now() - t0);
          if (performance.now() - t0 > 30_000) return fail(new Error("the shared report did not render in 30 s"));
          requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
    { hash, selector: RENDERED },
  );
}

/**
 * Prints the link's size (target ≤ 32 KB) and link opened → report rendered (target ≤ 1 s), median of 3.
 *
 * @example await benchShare(harness, line) // "600-case report link: opened → rendered   120 ms …"
 */
export async function benchShare(harness: BrowserHarness, line: (label: string, value: string) => void) {
  const cli =
    process.env["EVALRX_BENCH_REPORT"] ??
    new URL("../../report/fixtures/cli-report-200.json", import.meta.url).pathname;
  const real = parseReport(readFileSync(cli, "utf8"));
  await benchOne(harness, line, "600-case demo report", demoReport({ cases: 600 }));
  await benchOne(harness, line, `CLI report (${real.provenance.data.n} cases)`, real);
}

/** In every document of a page: the first frame (performance.now(), from navigation start) with the report. */
const WATCH = `
  globalThis.__name = (f) => f;
  const watch = () => {
    if (document.querySelector(${JSON.stringify(RENDERED)})) window.__sharedAt = performance.now();
    else requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
`;

/** Opens `link` as a new page load in `page`; ms from navigation start to the report on screen. */
async function freshLoad(page: Page, link: string): Promise<number> {
  await page.goto("about:blank");
  await page.goto(link);
  await page.waitForFunction(() => (window as unknown as { __sharedAt?: number }).__sharedAt !== undefined, undefined, {
    timeout: 30_000,
  });
  return page.evaluate(() => (window as unknown as { __sharedAt: number }).__sharedAt);
}

async function benchOne(
  harness: BrowserHarness,
  line: (label: string, value: string) => void,
  name: string,
  report: Report,
) {
  const { token, omitted } = await reportLink(report);
  const link = shareUrl(harness.url, token);
  line(
    `${name}: link size (≤ 32 KB)`,
    `${(link.length / 1024).toFixed(1)} KB (${omitted.length ? `without ${omitted.join(", ")}` : "whole report"})`,
  );
  // A colleague's first visit: a new profile each time (empty HTTP cache, no service worker).
  const first: number[] = [];
  let modelWorkers = 0;
  let wasm = 0;
  for (let i = 0; i < 3; i++) {
    const context = await harness.context.browser()!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      context.on("request", (r) => void (r.url().endsWith(".wasm") && wasm++));
      const page = await context.newPage();
      page.on("worker", (w) => void (w.url().includes("model.worker") && modelWorkers++));
      await page.addInitScript(WATCH);
      first.push(await freshLoad(page, link));
    } finally {
      await context.close();
    }
  }
  const page = await harness.context.newPage();
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.addInitScript(WATCH);
    // A user of the app: it was opened (the home page: the model worker, the engine check) and its offline copy
    // saved, so the service worker serves the app from its cache.
    await page.goto(harness.url);
    await page.getByTestId("model-badge").waitFor();
    await offlineCopyActive(page, 300_000);
    const inApp: number[] = [];
    for (let i = 0; i < 3; i++) {
      inApp.push(await openInApp(page, `#/share/${token}`));
      await page.evaluate(() => (location.hash = "#/"));
      await page.getByTestId("share-page").waitFor({ state: "detached" });
    }
    const returning: number[] = [];
    for (let i = 0; i < 3; i++) returning.push(await freshLoad(page, link));
    line(
      `${name}: link opened → rendered (≤ 1 s)`,
      `${ms(median(inApp))} in an open app; as a fresh page load from navigation start ${ms(median(first))} on a first visit, ${ms(median(returning))} with the offline copy (medians of 3)`,
    );
    line(
      `${name}: model workers and wasm on first visits`,
      `${modelWorkers} model worker${modelWorkers === 1 ? "" : "s"} started, ${wasm} wasm request${wasm === 1 ? "" : "s"} (3 loads; a share view runs no model)`,
    );
  } finally {
    await page.close();
  }
}
