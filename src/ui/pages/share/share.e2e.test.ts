/**
 * Share links and bundles in Debian's Chromium: a link the CLI printed opens the same report (the same
 * verdicts) with no server; a run link full of hostile strings (`<script>`, `onerror=`, `javascript:`,
 * `</style>`, bidi controls) renders them as text, runs nothing and fetches nothing, and saves as a run;
 * a bundle opens the same way; a decompression bomb, an oversized link, malformed base64 and a schema
 * violation each say what is wrong and show nothing from the payload. A shared report saves to my reports
 * (listed on #/report, reopened with its verdicts) and downloads as the very HTML file the CLI writes.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { deflateRawSync } from "node:zlib";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { watchInert } from "./inert-watch.ts";
import { renderReportHtml } from "../../../report/html.ts";
import { href } from "../../app/routes.ts";
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
  // A share view runs no model: opened as a page load, it starts no model worker and fetches no wasm runtime (the
  // service worker, saving the offline copy after the visit above, may: its requests are not the page's).
  await page.goto("about:blank"); // the home page's worker and its requests gone
  const workers: string[] = [];
  const wasm: string[] = [];
  const onWorker = (w: { url(): string }) => void workers.push(w.url());
  const onRequest = (r: Request) => void (r.url().endsWith(".wasm") && !r.serviceWorker() && wasm.push(r.url()));
  page.on("worker", onWorker);
  harness.context.on("request", onRequest);
  const started = Date.now();
  await page.goto(link);
  await page.getByTestId("shared-report-hypotheses").waitFor();
  const ms = Date.now() - started;
  await page.waitForTimeout(500);
  page.off("worker", onWorker);
  harness.context.off("request", onRequest);
  expect(workers.filter((url) => url.includes("model.worker"))).toEqual([]);
  expect(wasm).toEqual([]);
  expect(await page.getByTestId("engine-badge").textContent()).toBe("Engine: not started");
  expect(ms).toBeLessThan(5000); // a guard against a hang, not a timing claim (bench:app measures it)
  expect(await page.getByTestId("shared-verdict").allTextContents()).toEqual(report.hypotheses.map((h) => h.verdict));
  expect(await page.getByTestId("shared-report-question").textContent()).toBe(neutralizeBidi(report.question));
  expect(await page.getByTestId("share-title").textContent()).toBe(`Report ${neutralizeBidi(report.runId)}`);
  await expectInert();
});

it("saves a shared report to my reports and downloads the same HTML file the CLI and the report page write", async () => {
  const report = demoReport({ cases: 600, hostile: true });
  const shared = await reportLink(report);
  expect(shared.payload.kind).toBe("report");
  const carried = (shared.payload as Extract<typeof shared.payload, { kind: "report" }>).report;
  await open(shared.token);
  await page.getByTestId("shared-report-hypotheses").waitFor();
  const download = async (testid: string) => {
    const [file] = await Promise.all([page.waitForEvent("download"), page.getByTestId(testid).click()]);
    return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, "utf8") };
  };
  const fromShare = await download("share-html");
  expect(fromShare.text).toBe(renderReportHtml(carried));
  expect(fromShare.name).toMatch(/^[\w.-]+\.html$/);
  const verdicts = [...fromShare.text.matchAll(/<span class="verdict tone-\w+">(\w+)<\/span>/g)].map((m) => m[1]);
  expect(verdicts).toEqual(expect.arrayContaining(report.hypotheses.map((h) => h.verdict)));

  await page.getByTestId("share-save-report").click();
  await page.getByTestId("share-saved-report").waitFor();
  const screens = process.env["OFFLINE_SCREENS"];
  if (screens) {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(screens, "share-report-saved.png") });
  }
  await page.getByTestId("share-saved-report").getByRole("link").click();
  await page.getByTestId("report-end").waitFor({ timeout: 60_000 });
  const counts = (v: string) => report.hypotheses.filter((h) => h.verdict === v).length;
  expect(await page.getByTestId("report-verdicts").textContent()).toMatch(
    new RegExp(
      `${counts("SUPPORTED")} SUPPORTED.*${counts("REFUTED")} REFUTED.*${counts("INCONCLUSIVE")} INCONCLUSIVE`,
    ),
  );
  await expectInert();
  const fromReportPage = await download("export-html");
  expect(fromReportPage.text).toBe(fromShare.text);
  // Listed among my reports, and there after a reload (IndexedDB).
  await page.goto(`${harness.url}#/report`);
  await page.reload();
  const link = href({ page: "report", id: report.runId });
  await expect.poll(() => page.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toContain(link);
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
