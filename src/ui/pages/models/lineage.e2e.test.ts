import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { invertedL4Report } from "../../../agent/l4/l4-report.node.ts";
import { plantedDimReport } from "../../../agent/lineage/planted-report.node.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { REPO_ROOT } from "../../../models/load.node.ts";

/** An element's text with its whitespace runs made one space, as a reader sees it. */
const words = (text: string | null) => (text ?? "").replace(/\s+/g, " ");

let harness: BrowserHarness;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-lineage-e2e-"));
  [harness] = await Promise.all([
    startBrowserHarness(),
    plantedDimReport(join(dir, "inv")),
    invertedL4Report(join(dir, "l4")),
  ]);
}, 240_000);
afterAll(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("a stored investigation's validated repair is promoted on the Models page and shown as a chain with its verified delta", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  await page.goto(`${harness.url}#/models`);
  await page.getByTestId("lineage-empty").waitFor();
  // The report the investigation wrote, opened in the page (kept in its store).
  await page.goto(`${harness.url}#/report`);
  await page
    .getByTestId("open-report")
    .locator('input[type="file"]')
    .first()
    .setInputFiles(join(dir, "inv/report.json"));
  await page.getByTestId("report-end").waitFor({ timeout: 30_000 });

  await page.goto(`${harness.url}#/models`);
  const offer = page.getByTestId("promotion-offer");
  await offer.waitFor();
  // Only what M5 validated is offered: the +2 image-attention write, not the rewrites that failed.
  expect(await offer.count()).toBe(1);
  expect(words(await offer.textContent())).toMatch(
    /planted-vlm \+ L3b attention \+2 on image tokens: failures −28\.3 pp fixed 17, broke 0 of 60/,
  );
  await offer.getByTestId("promote").click();
  const chain = page.locator('[data-testid="lineage-chain"][data-model="planted-vlm+attention-bias-image-2"]');
  await chain.waitFor();
  expect(await chain.getByTestId("lineage-step").count()).toBe(1);
  expect(await chain.getByTestId("lineage-delta").textContent()).toBe("failures −28.3 pp");
  expect(words(await chain.textContent())).toMatch(/fixed 17, broke 0 of 60 · p = 0\.00960 · e = 100/);
  await expect.poll(() => offer.count()).toBe(0);

  // It survives a reload (the page's lineage database), and its report link opens the investigation.
  await page.reload();
  await chain.waitFor();
  mkdirSync(join(REPO_ROOT, "tmp/screens"), { recursive: true });
  await page.getByTestId("lineage").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(REPO_ROOT, "tmp/screens/models-lineage.png") });
  await chain.getByRole("link", { name: "report" }).click();
  await page.getByTestId("report-end").waitFor({ timeout: 30_000 });

  // An L4 repair (new weights) is promoted with its merged folder; its chain says where the weights are.
  await page.goto(`${harness.url}#/report`);
  await page
    .getByTestId("open-report")
    .locator('input[type="file"]')
    .first()
    .setInputFiles(join(dir, "l4/report.json"));
  await page.getByTestId("report-end").waitFor({ timeout: 30_000 });
  await page.goto(`${harness.url}#/models`);
  const l4Offer = page.getByTestId("promotion-offer").filter({ hasText: "L4" });
  await l4Offer.waitFor();
  await l4Offer.getByTestId("promote").click();
  const l4Chain = page.locator(
    '[data-testid="lineage-chain"][data-model="tiny-vlm+lora-lm_head-r4-a8-steps200-seed1"]',
  );
  await l4Chain.waitFor();
  expect(words(await l4Chain.textContent())).toMatch(
    /tiny-vlm original → tiny-vlm\+lora-lm_head-r4-a8-steps200-seed1 L4 LoRA head adapter \(rank 4\): failures −/,
  );
  // Weights written by the CLI are a folder on disk, not one kept in this browser: the page says so.
  expect(words(await l4Chain.textContent())).toMatch(/not a folder kept in this browser/);
  mkdirSync(join(REPO_ROOT, "tmp/h19"), { recursive: true });
  await page.getByTestId("lineage").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(REPO_ROOT, "tmp/h19/models-lineage-l4.png") });
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
}, 120_000);
