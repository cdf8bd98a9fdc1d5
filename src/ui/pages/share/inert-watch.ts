/**
 * For e2e tests of untrusted input: watches a page for anything a hostile payload could make happen
 * (page errors, dialogs, requests for `src=x` or `javascript:` URLs, requests off the machine) and checks
 * that nothing did — no marker a payload sets (`window.__pwned`), no element that runs or fetches.
 */
import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { BrowserHarness } from "../../../node/browser-harness.ts";

/**
 * Starts watching `page`; the returned check fails on the first sign that a payload ran.
 *
 * @example const expectInert = watchInert(page, harness); …; await expectInert()
 */
export function watchInert(page: Page, harness: BrowserHarness): () => Promise<void> {
  const pageErrors: string[] = [];
  const dialogs: string[] = [];
  // A hostile `src=x` would show here as a request for `/x` (on localhost, so the harness's guard lets it by).
  const requests: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("request", (r) => requests.push(r.url()));
  return async () => {
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    const main = page.locator("main");
    expect(await main.locator("script, img, svg[onload], iframe, object, embed").count()).toBe(0);
    expect(await main.locator("[onerror], [onload], a[href^='javascript:']").count()).toBe(0);
    expect(requests.filter((u) => /\/x($|\?)|javascript:|pwned/.test(u))).toEqual([]);
    expect(harness.foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  };
}
