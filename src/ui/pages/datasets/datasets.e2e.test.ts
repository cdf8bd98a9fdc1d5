import { afterAll, beforeAll, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { holdout, importDataset, select } from "../../../datasets/index.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";
import { compileFilter } from "./filter-expression.ts";

const ROOT = new URL("../../../../", import.meta.url).pathname;
const FIXTURES = join(ROOT, "src/datasets/fixtures");

let harness: BrowserHarness;
let page: Page;
let work: string;
const errors: string[] = [];

beforeAll(async () => {
  harness = await startBrowserHarness();
  work = mkdtempSync(join(tmpdir(), "evalrx-datasets-e2e-"));
  page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  page.on("pageerror", (error) => errors.push(error.message));
});
afterAll(async () => {
  await harness?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The fixture dataset with bad rows, as a folder: `set/dataset.jsonl` and `set/images/*.png`. */
function fixtureFolder(): string {
  const dir = join(work, "set");
  mkdirSync(join(dir, "images"), { recursive: true });
  cpSync(join(FIXTURES, "dataset.jsonl"), join(dir, "dataset.jsonl"));
  cpSync(join(FIXTURES, "images"), join(dir, "images"), { recursive: true });
  return dir;
}

/** What `evalrx data check` says of a file. */
function dataCheck(file: string): { valid: number; problems: { line: number; reason: string }[] } {
  try {
    return JSON.parse(
      execFileSync(process.execPath, [join(ROOT, "src/node/bin.mjs"), "data", "check", file, "--json"], {
        encoding: "utf8",
      }),
    );
  } catch (error) {
    // Exit 1: some rows are bad; the report is on stdout all the same.
    return JSON.parse((error as { stdout: string }).stdout);
  }
}

/**
 * A "not JSON" reason carries the JSON parser's own words, which differ between V8 versions (Node's and
 * Chromium's): compare the rest.
 */
const engineFree = (text: string) => text.replace(/not JSON \(.*\); /, "not JSON (…); ");

/** The axe-core scan's serious and critical violations on the page as it is now (with the nodes they name). */
async function seriousViolations(): Promise<string[]> {
  await page.evaluate(readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"));
  return page.evaluate(async () => {
    type Result = { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
    const result = await (window as unknown as { axe: { run(): Promise<Result> } }).axe.run();
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

const countText = async () => (await page.getByTestId("case-count").innerText()).trim();

it("adds the demo datasets in one click from the empty Datasets page", async () => {
  await page.goto(`${harness.url}#/datasets`);
  await page.getByText("No datasets yet").waitFor();
  await page.getByTestId("add-demo").click();
  await page.getByTestId("demo-result").waitFor({ timeout: 60_000 });
  const rows = page.getByTestId("dataset-row");
  await expect.poll(() => rows.count()).toBe(3);
  const table = await page.getByTestId("dataset-list").innerText();
  expect(table).toMatch(/pope\s+600\s+jsonl\s+demo\/pope\.jsonl/);
  expect(table).toMatch(/captions\s+100\s+jsonl/);
  expect(table).toMatch(/tiny-lm\s+208\s+jsonl/);
  expect(await page.getByTestId("demo-result").innerText()).toContain("pope 600 cases added");
});

it("filters the POPE cases with the filter expression, and previews a selection with the CLI's select and holdout", async () => {
  const pope = (await importDataset(readFileSync(join(ROOT, "public/demo/pope.jsonl")), { name: "pope.jsonl" })).cases;
  await page.goto(`${harness.url}#/datasets/pope`);
  await page.getByTestId("case-row").first().waitFor();
  expect(await countText()).toBe("600 cases");
  // Thumbnails come from the stored image blobs.
  await expect.poll(() => page.getByTestId("thumb").count()).toBeGreaterThan(3);
  expect(
    await page
      .getByTestId("thumb")
      .first()
      .evaluate((img) => (img as HTMLImageElement).naturalWidth),
  ).toBe(48);

  const expression = 'split == "adversarial" and meta.n_objects >= 3 and not ("yes" in expected)';
  const expected = pope.filter(compileFilter(expression)).length;
  expect(expected).toBeGreaterThan(0);
  await page.getByTestId("filter-expression").fill(expression);
  await expect.poll(countText).toBe(`${expected} of 600 cases`);
  // The rows shown are the filter's: every one is of the adversarial split.
  await expect
    .poll(async () => [...new Set(await page.locator('[data-testid="case-row"] .split').allInnerTexts())])
    .toEqual(["adversarial"]);
  // The split chip and the id filter narrow it further.
  await page.getByTestId("filter-id").fill("0001");
  await expect.poll(countText).toMatch(/^[0-9] of 600 cases$/);
  await page.getByTestId("filter-id").fill("");
  // A mistake says where and what was expected.
  await page.getByTestId("filter-expression").fill('split = "adversarial"');
  await page.getByTestId("filter-error").waitFor();
  expect(await page.getByTestId("filter-error").innerText()).toContain(
    "at column 7: '=' is not an operator; use == to compare",
  );
  await page.getByTestId("filter-expression").fill("");
  await expect.poll(countText).toBe("600 cases");

  // A case's detail: its whole input, its meta and the image at full size.
  await page.getByTestId("case-row").nth(1).click();
  await page.getByTestId("case-detail").waitFor();
  expect(await page.getByTestId("case-prompt").innerText()).toBe(pope[1]!.input.prompt);
  await page.getByTestId("case-image").waitFor();
  expect(await page.getByTestId("case-meta").innerText()).toContain('"question_type": "existence"');
  expect((await seriousViolations()).join("\n")).toBe("");

  await page.getByTestId("selection-preview").locator("summary").click();
  await page.getByTestId("preview-sample").fill("100");
  const chosen = select(pope, { sample: 100 });
  const split = holdout(chosen, 0.4, { by: "cluster", salt: "evalrx-holdout-1" });
  await expect
    .poll(async () => (await page.getByTestId("preview-result").innerText()).replace(/\s+/g, " "))
    .toContain(
      `100 cases selected; the holdout keeps ${split.explore.length} to explore and seals ${split.sealed.length}`,
    );
});

it("lists a picked folder's bad rows with their lines before anything is stored, then imports the valid rows with their images", async () => {
  const dir = fixtureFolder();
  const cli = dataCheck(join(dir, "dataset.jsonl"));
  await page.goto(`${harness.url}#/datasets`);
  await page.locator('[data-testid="dataset-drop"] input[webkitdirectory]').setInputFiles(dir);
  await page.getByTestId("check-summary").waitFor();
  const summary = await page.getByTestId("check-summary").innerText();
  expect(summary).toContain(`${cli.valid} valid, ${cli.problems.length} problems`);
  // One line per bad row: the line and the reason `evalrx data check` gives.
  const shown = await page.getByTestId("problem").allInnerTexts();
  expect(shown.map((t) => engineFree(t.replace(/\s+/g, " ").trim()))).toEqual(
    cli.problems.map((p) => engineFree(`line ${p.line} ${p.reason}`.replace(/\s+/g, " "))),
  );
  // Nothing is stored before the user says so.
  await expect.poll(() => page.getByTestId("dataset-row").count()).toBe(3);
  expect((await seriousViolations()).join("\n")).toBe("");

  expect(await page.getByTestId("dataset-name").inputValue()).toBe("dataset");
  await page.getByTestId("import-button").click();
  await page.getByTestId("import-done").waitFor();
  expect(await page.getByTestId("import-done").innerText()).toContain(`${cli.valid} cases added`);
  await expect.poll(() => page.getByTestId("dataset-row").count()).toBe(4);

  await page.getByTestId("import-done").getByRole("link", { name: "dataset" }).click();
  await page.getByTestId("case-row").first().waitFor();
  expect(await countText()).toBe(`${cli.valid} cases`);
  // The two cases whose images were found in the folder show them (q1's file, q9's data URL).
  await expect.poll(() => page.getByTestId("thumb").count()).toBe(2);
  // Each thumb's image is read from IndexedDB and decoded after its element is there: wait for the pixels.
  const widths = () =>
    page.getByTestId("thumb").evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth));
  await expect.poll(async () => (await widths()).every((w) => w > 0), { timeout: 10_000 }).toBe(true);
});

it("never replaces a dataset of the same name: adding again keeps its cases and adds only new ids", async () => {
  await page.goto(`${harness.url}#/datasets`);
  await page.locator('[data-testid="dataset-drop"] input[webkitdirectory]').setInputFiles(join(work, "set"));
  await page.getByTestId("name-taken").waitFor();
  expect(await page.getByTestId("import-button").innerText()).toBe("Import 5 valid cases as 'dataset-2'");
  await page
    .getByTestId("name-taken")
    .getByRole("radio", { name: /add to 'dataset'/ })
    .check();
  expect(await page.getByTestId("import-button").innerText()).toBe("Add new cases to 'dataset'");
  await page.getByTestId("import-button").click();
  await page.getByTestId("import-done").waitFor();
  expect(await page.getByTestId("import-done").innerText()).toContain("0 cases added, 5 already there");
  await expect.poll(() => page.getByTestId("dataset-row").count()).toBe(4);
});

it("a dataset dropped with its image (files, not a folder) finds the image by name; a mapping re-check reads it again", async () => {
  const png = readFileSync(join(FIXTURES, "images/red.png")).toString("base64");
  await page.getByTestId("dataset-drop").evaluate((zone, b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(
      new File(
        [
          '{"question":"Is it red?","answer":"yes","img":"pics/red.png","ok":"pass"}\n{"question":"Blue?","answer":"no","ok":"fail"}\n',
        ],
        "colors.jsonl",
      ),
    );
    transfer.items.add(new File([bytes], "red.png", { type: "image/png" }));
    zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, png);
  await page.getByTestId("check-summary").waitFor();
  // Its fields are not the dataset format's: the detected mapping is shown, and the image column is set by hand.
  await page.getByTestId("mapping").waitFor();
  expect(await page.getByTestId("map-input").locator("option:checked").innerText()).toBe("detect (found 'question')");
  await page.getByTestId("map-image").selectOption("img");
  await page.getByTestId("recheck").click();
  await expect.poll(async () => page.getByTestId("check-summary").innerText()).toContain("1 case with an image");
  await page.getByTestId("import-button").click();
  await page.getByTestId("import-done").waitFor();
  await page.getByTestId("import-done").getByRole("link", { name: "colors" }).click();
  await page.getByTestId("case-row").first().waitFor();
  await expect.poll(() => page.getByTestId("thumb").count()).toBe(1);
});

it("deletes a dataset after asking", async () => {
  await page.goto(`${harness.url}#/datasets/colors`);
  await page.getByTestId("delete-dataset").click();
  await page.getByRole("button", { name: "Delete the dataset" }).click();
  await page.waitForURL(/#\/datasets$/);
  await expect.poll(() => page.getByTestId("dataset-row").count()).toBe(4);
  expect(await page.getByTestId("dataset-list").innerText()).not.toContain("colors");
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});
