/**
 * Untrusted input in Debian's Chromium, outside share links: the built app's Content Security Policy stops an
 * inline script, and a dataset whose ids, prompts, expected answers, tags and column names are the XSS corpus
 * imports and shows them as text — nothing runs, nothing is fetched. (Links and bundles: share.e2e.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { HOSTILE_STRINGS } from "../../../share/fixtures.ts";
import { watchInert } from "./inert-watch.ts";

let harness: BrowserHarness;
let page: Page;
let dir: string;
let expectInert: () => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-inert-e2e-"));
  harness = await startBrowserHarness();
  page = await harness.context.newPage();
  expectInert = watchInert(page, harness);
});

afterAll(async () => {
  await harness?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("the built app sends a Content Security Policy that stops inline script", async () => {
  const response = await page.goto(harness.url);
  const header = response!.headers()["content-security-policy"] ?? "";
  expect(header).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(header).toContain("connect-src 'self' https://huggingface.co");
  expect(await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute("content")).toContain(
    "object-src 'none'",
  );
  await page.getByTestId("model-badge").waitFor();
  await page.evaluate(() => {
    const script = document.createElement("script");
    script.textContent = "window.__pwned = 'inline'";
    document.head.append(script);
  });
  expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
  await expectInert();
});

it("imports a dataset whose ids, prompts, answers, tags and column names are hostile, and shows them as text", async () => {
  const rows = HOSTILE_STRINGS.map((h, i) => ({
    id: `${h} #${i}`,
    question: `${h} is there a cat?`,
    answer: i % 2 ? "yes" : `${h} no`,
    tags: [h, "split:adversarial"],
    [HOSTILE_STRINGS[(i + 1) % HOSTILE_STRINGS.length]!]: h,
  }));
  const file = join(dir, "hostile.jsonl");
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n"));
  await page.goto(`${harness.url}#/datasets`);
  await page.locator('[data-testid="dataset-drop"] input[type=file]:not([webkitdirectory])').setInputFiles(file);
  await page.getByTestId("check-summary").waitFor();
  await expectInert();
  await page.getByTestId("import-button").click();
  await page.getByTestId("import-done").waitFor();
  await page.getByTestId("import-done").getByRole("link").first().click();
  await page.getByTestId("case-row").first().waitFor();
  await page.getByTestId("case-row").first().click();
  await page.getByTestId("case-detail").waitFor();
  expect(await page.getByTestId("case-prompt").innerText()).toContain("window.__pwned");
  await expectInert();
});
