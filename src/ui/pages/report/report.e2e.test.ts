import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { parseReport } from "../../../report/schema.ts";

/** A report `evalrx investigate --sample 200 --seed 1` wrote (src/report/fixtures/README.md). */
const FIXTURE = new URL("../../../report/fixtures/cli-report-200.json", import.meta.url).pathname;
const report = parseReport(readFileSync(FIXTURE, "utf8"));

let harness: BrowserHarness;
let dir: string;
beforeAll(async () => {
  harness = await startBrowserHarness();
  dir = mkdtempSync(join(tmpdir(), "evalrx-report-e2e-"));
});
afterAll(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("opens a report.json the CLI wrote: every section renders, bars point the way their counts say, it reopens from the store", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // Nothing stored yet: the page says so, and a file that is not a report is refused by name.
  await page.goto(`${harness.url}#/report`);
  await page.getByText("No report is stored in this browser yet.").waitFor();
  const input = page.getByTestId("open-report").locator('input[type="file"]').first();
  const junk = join(dir, "notes.json");
  writeFileSync(junk, '{"format":"something-else"}');
  await input.setInputFiles(junk);
  await expect
    .poll(() => page.getByTestId("open-report-error").textContent())
    .toMatch(/^!?\s*notes\.json: report: not a valid EvalRx report/);

  // The CLI's report: stored, then shown at #/report/<its run id>.
  await input.setInputFiles(FIXTURE);
  await page.getByTestId("report-end").waitFor({ timeout: 30_000 });
  expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#/report/${report.runId}`);
  await expect
    .poll(() => page.getByTestId("report-verdicts").textContent())
    .toMatch(/2 SUPPORTED.*0 REFUTED.*2 INCONCLUSIVE/);
  for (const id of [
    "verdicts",
    "hypotheses",
    "signals",
    "probe",
    "pope",
    "chair",
    "repairs",
    "problems",
    "provenance",
    "methods",
  ])
    expect(await page.getByTestId(`section-${id}`).count(), id).toBe(1);
  for (const h of report.hypotheses) expect(await page.getByTestId(`section-hypothesis-${h.id}`).count()).toBe(1);
  for (const figure of ["forest", "signal-distributions", "attention-grid", "repair-ladder"])
    expect(await page.getByTestId(`figure-${figure}`).locator("svg").count(), figure).toBe(1);
  expect(await page.getByTestId("table-pope").locator("tbody tr").count()).toBe(report.probe!.pope!.length);
  expect(await page.getByTestId("table-pope").locator("thead").textContent()).toMatch(/F1.*Yes-ratio/);

  // Evidence: each hypothesis' failing and passing cases, with the image under its attention overlay.
  const cases = page.getByTestId("evidence-case");
  const expected = report.evidence!.hypotheses.reduce((n, h) => n + h.failing.length + h.passing.length, 0);
  expect(await cases.count()).toBe(expected);
  const first = cases.first();
  expect(await first.locator("img").getAttribute("src")).toMatch(/^data:image\/png;base64,/);
  // Overlays are drawn as their cases come near the viewport: the last case has none until scrolled to.
  expect(await cases.last().getByTestId("overlay").count()).toBe(0);
  await first.scrollIntoViewIfNeeded();
  await expect.poll(() => first.locator('[data-testid="overlay"] svg rect.cell').count()).toBe(36);
  await cases.last().scrollIntoViewIfNeeded();
  await expect.poll(() => cases.last().locator('[data-testid="overlay"] svg rect.cell').count()).toBe(36);
  expect(await first.getByTestId("evidence-answer").textContent()).toBe(
    report.evidence!.hypotheses[0]!.failing[0]!.answer,
  );
  const peak = () =>
    first
      .locator('[data-testid="overlay"] svg rect.cell')
      .evaluateAll((rects) => Math.max(...rects.map((r) => Number(r.getAttribute("opacity")))));
  expect(await peak()).toBeCloseTo(0.6, 2);
  await page.getByTestId("overlay-opacity").fill("0.9");
  await expect.poll(peak).toBeCloseTo(0.9, 2);

  // The repair ladder as drawn in the page: each bar leaves zero on the side its fixed − broken says.
  const bars = await page.getByTestId("figure-repair-ladder").evaluate((figure) => {
    const zero = Number(figure.querySelector("line.zero-line")!.getAttribute("x1"));
    return [...figure.querySelectorAll("rect.bar")].map((r) => ({
      x: Number(r.getAttribute("x")),
      width: Number(r.getAttribute("width")),
      tip: r.querySelector("title")?.textContent ?? "",
      zero,
    }));
  });
  for (const c of report.repairs!.candidates.filter((c) => c.fixed !== c.broken)) {
    const bar = bars.find((b) => b.tip.startsWith(`${c.tier} ${c.candidate}:`))!;
    if (c.fixed < c.broken) expect(bar.x + bar.width, c.candidate).toBeCloseTo(bar.zero, 1);
    else expect(bar.x, c.candidate).toBeCloseTo(bar.zero, 1);
    expect(bar.width).toBeGreaterThan(0);
  }

  // Width: nothing wider than a 1280 px window.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);

  // Export HTML: the same self-contained file the CLI writes.
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-html").click()]);
  const html = readFileSync((await download.path())!, "utf8");
  expect(html).toContain("Content-Security-Policy");
  expect(html).not.toMatch(/<script|<link|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  expect(html).toContain('id="figure-repair-ladder"');

  // Reload: the report reopens from IndexedDB, and the reports list names it.
  await page.reload();
  await page.getByTestId("report-end").waitFor({ timeout: 30_000 });
  await page.goto(`${harness.url}#/report`);
  await page.getByTestId("reports-table").getByRole("link", { name: report.runId }).waitFor();
  await page.goto(`${harness.url}#/report/no-such-report`);
  await page.getByText("No report named no-such-report is stored in this browser.").waitFor();

  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 120_000);

it("the report page passes an axe-core scan with no serious or critical violation", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${harness.url}#/report`);
  await page.getByTestId("open-report").locator('input[type="file"]').first().setInputFiles(FIXTURE);
  await page.getByTestId("report-end").waitFor({ timeout: 30_000 });
  // Every case's overlay drawn (they are drawn as they come near the viewport), so the scan sees them all.
  const cases = page.getByTestId("evidence-case");
  for (let i = 0; i < (await cases.count()); i++) await cases.nth(i).scrollIntoViewIfNeeded();
  await expect.poll(() => page.getByTestId("overlay").count()).toBe(await cases.count());
  await page.waitForTimeout(300);
  // Evaluated, not injected as a script tag, so a Content Security Policy does not stop it.
  await page.evaluate(readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"));
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe;
    // Every rule on the whole page but colour contrast, which axe measures slowly (a minute for this page's ~7,700
    // nodes on a busy 2-core machine): it is checked on the header and on one hypothesis with its evidence cases,
    // which hold every kind of text the report draws (tones, badges, tables, cards); the figures' colours are the
    // theme's Okabe–Ito palette.
    const all = await axe.run(document, {
      resultTypes: ["violations"],
      rules: { "color-contrast": { enabled: false } },
    });
    const contrast = await axe.run(
      { include: [['[data-testid="report-header"]'], ['[data-testid="section-hypothesis-H1"]']], exclude: [["svg"]] },
      { resultTypes: ["violations"], runOnly: ["color-contrast"] },
    );
    return [...all.violations, ...contrast.violations]
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} — ${v.nodes
            .slice(0, 3)
            .map((n) => JSON.stringify(n.target))
            .join(", ")}`,
      );
  });
  expect(violations).toEqual([]);
}, 90_000);
