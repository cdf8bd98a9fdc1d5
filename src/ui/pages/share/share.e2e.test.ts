/**
 * Share links and bundles in Debian's Chromium: a link the CLI printed opens the same report (the same
 * verdicts) with no server; a run link full of hostile strings (`<script>`, `onerror=`, `javascript:`,
 * `</style>`, bidi controls) renders them as text, runs nothing and fetches nothing, and saves as a run;
 * a bundle opens the same way; a decompression bomb, an oversized link, malformed base64 and a schema
 * violation each say what is wrong and show nothing from the payload.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { deflateRawSync } from "node:zlib";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { watchInert } from "./inert-watch.ts";
import { neutralizeBidi } from "../../../report/safe-text.ts";
import { demoReport, demoRunExport } from "../../../share/fixtures.ts";
import { deflateRaw, runLink, reportLink, toBase64Url, writeBundle, MAX_LINK_CHARS } from "../../../share/index.ts";

const exec = promisify(execFile);
const bin = fileURLToPath(new URL("../../../node/bin.mjs", import.meta.url));

let harness: BrowserHarness;
let page: Page;
let dir: string;
let expectInert: () => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-share-e2e-"));
  harness = await startBrowserHarness();
  page = await harness.context.newPage();
  expectInert = watchInert(page, harness);
});

afterAll(async () => {
  await harness?.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = async (fragment: string) => {
  await page.goto(`${harness.url}#/share/${fragment}`);
};

it("opens the link the CLI printed: the same report, the same verdicts, in well under a second", async () => {
  const report = demoReport({ cases: 600, hostile: true });
  const file = join(dir, "report.json");
  writeFileSync(file, JSON.stringify(report));
  const { stdout } = await exec(process.execPath, [bin, "share", file, "--base", harness.url], { encoding: "utf8" });
  const link = stdout.trim();
  expect(link.startsWith(`${harness.url.replace(/\/$/, "")}/#/share/1.`)).toBe(true);
  expect(link.length).toBeLessThan(MAX_LINK_CHARS);
  await page.goto(harness.url);
  await page.getByTestId("model-badge").waitFor();
  const started = Date.now();
  await page.goto(link);
  await page.getByTestId("shared-report-hypotheses").waitFor();
  const ms = Date.now() - started;
  expect(ms).toBeLessThan(5000); // a guard against a hang, not a timing claim (bench:app measures it)
  expect(await page.getByTestId("shared-verdict").allTextContents()).toEqual(report.hypotheses.map((h) => h.verdict));
  expect(await page.getByTestId("shared-report-question").textContent()).toBe(neutralizeBidi(report.question));
  expect(await page.getByTestId("share-title").textContent()).toBe(`Report ${neutralizeBidi(report.runId)}`);
  await expectInert();
});

it("renders a hostile run as text, runs nothing, and saves it as a run", async () => {
  const run = demoRunExport({ cases: 21, hostile: true });
  const { token } = await runLink(run);
  await open(token);
  await page.getByTestId("shared-cases").waitFor();
  expect(await page.getByTestId("shared-run-model").textContent()).toBe(run.run.model);
  const ids = await page.getByTestId("shared-case-id").allTextContents();
  expect(ids.slice(0, 4)).toEqual(run.items.slice(0, 4).map((i) => neutralizeBidi(i.caseId)));
  // The bidi override shows as a code point, so "gnp.exe" cannot pass for "exe.png".
  expect(ids[4]).toContain("[U+202E]");
  await expectInert();
  await page.getByTestId("share-save").click();
  await page.getByTestId("share-saved").waitFor();
  await page.getByTestId("share-saved").getByRole("link").click();
  await page.getByTestId("run-id").waitFor();
  expect(await page.getByTestId("run-id").textContent()).toBe(run.run.id);
  await page.getByTestId("case-table").waitFor();
  await expectInert();
  // The run's page makes the same kind of link: opened, it shows the same run.
  await page.getByTestId("share-run").click();
  const link = await page.getByTestId("share-run-link").inputValue();
  expect(link).toMatch(/#\/share\/1\./);
  await page.goto(link);
  await page.getByTestId("shared-cases").waitFor();
  expect(await page.getByTestId("share-title").textContent()).toBe(`Run ${neutralizeBidi(run.run.id)}`);
  expect(await page.getByTestId("shared-case-id").first().textContent()).toBe(neutralizeBidi(run.items[0]!.caseId));
  await expectInert();
});

it("opens a bundle file the same way", async () => {
  const run = demoRunExport({ cases: 12, hostile: true, id: "bundled <b>run</b>" });
  const file = join(dir, "run.evalrx.zip");
  writeFileSync(file, writeBundle({ kind: "run", run }));
  await page.goto(`${harness.url}#/share`);
  await page.getByTestId("share-drop").locator("input[type=file]").first().setInputFiles(file);
  await page.getByTestId("shared-cases").waitFor();
  expect(await page.getByTestId("share-title").textContent()).toBe("Run bundled <b>run</b>");
  await expectInert();
  const bad = join(dir, "bad.evalrx.zip");
  writeFileSync(bad, "PK not really a zip");
  await page.getByTestId("share-drop").locator("input[type=file]").first().setInputFiles(bad);
  await page.getByTestId("share-refused").waitFor();
  expect(await page.getByTestId("share-refused").textContent()).toContain("bad.evalrx.zip");
});

it("refuses a bomb, an oversized link, malformed base64 and a schema violation, showing nothing of them", async () => {
  const pack = async (value: unknown) =>
    `1.${toBase64Url(await deflateRaw(new TextEncoder().encode(JSON.stringify(value))))}`;
  const share = (await reportLink(demoReport({ cases: 40 }))).payload;
  const cases: [string, RegExp][] = [
    [`1.${toBase64Url(new Uint8Array(deflateRawSync(new Uint8Array(4 * 2 ** 20).fill(32))))}`, /decompression bomb/],
    [`1.${"A".repeat(MAX_LINK_CHARS + 10)}`, /carries 32,780 characters; a share link holds at most 32,768/],
    ["1.abc!def<script>", /which base64url does not use/],
    [
      await pack({ ...share, report: { ...demoReport(), hypotheses: "<img src=x onerror=window.__pwned=9>" } }),
      /hypotheses/,
    ],
  ];
  for (const [fragment, message] of cases) {
    await open(fragment);
    const refused = page.getByTestId("share-refused");
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(message);
    expect(await refused.textContent()).not.toContain("<img");
    expect(await page.locator("[data-testid^=shared-]").count()).toBe(0);
    await expectInert();
  }
});
