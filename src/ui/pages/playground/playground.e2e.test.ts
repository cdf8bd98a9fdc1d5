/**
 * The playground in Debian's Chromium with the bundled tiny-vlm on ONNX Runtime Web: a demo POPE case is
 * asked about and explained (token strip with top-k, heatmap by mode, attention matrix, logit lens), the
 * page's answer equals onnxruntime-node's on the same case, an intervention is shown beside the unmodified
 * answer, and a question that fails — one longer than the model's context, or an image it cannot read —
 * leaves no old answer behind. axe-clean, no wider than 1280 px, no request off the machine.
 * Set PLAYGROUND_SCREENS=<dir> to also write screenshots.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadModel, REPO_ROOT } from "../../../models/load.node.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";

const screens = process.env["PLAYGROUND_SCREENS"];
let harness: BrowserHarness;
let page: Page;
const pageErrors: string[] = [];
/** The first POPE demo case, as the file holds it. */
const first = JSON.parse(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"), "utf8").split("\n")[0]!) as {
  id: string;
  input: { prompt: string; image: string };
  expected: string;
};
let nodeAnswer: string;

beforeAll(async () => {
  const answerInNode = async () => {
    const model = await loadModel("tiny-vlm");
    try {
      const image = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", first.input.image)));
      return await model.generate({ prompt: first.input.prompt, image }, { maxNewTokens: 16 });
    } finally {
      await model.dispose();
    }
  };
  [harness, nodeAnswer] = await Promise.all([startBrowserHarness(), answerInNode()]);
  page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  if (screens) mkdirSync(screens, { recursive: true });
});
afterAll(async () => harness?.close());

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
const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);
const shot = async (name: string) => screens && page.screenshot({ path: join(screens, `${name}.png`), fullPage: true });

it("says what to do while no dataset is stored, then explains a demo case as onnxruntime-node answers it", async () => {
  await page.goto(`${harness.url}#/playground`);
  await page.getByText("No dataset stored").waitFor();
  await page.getByText("No answer yet").waitFor();
  expect(await seriousViolations()).toEqual([]);
  await shot("playground-empty");

  await page.goto(`${harness.url}#/datasets`);
  await page.getByTestId("add-demo").click();
  await page.getByTestId("demo-result").waitFor({ timeout: 60_000 });
  await page.goto(`${harness.url}#/playground?dataset=pope`);
  await page.getByTestId("pg-case").first().waitFor();
  await page.getByTestId("pg-search").fill(first.id);
  await expect.poll(() => page.getByTestId("pg-case").count()).toBe(1);
  await page.getByTestId("pg-case").click();

  const answer = page.getByTestId("pg-plain-answer");
  await answer.waitFor({ timeout: 120_000 });
  expect(await answer.innerText()).toBe(nodeAnswer);
  const facts = await page.getByTestId("pg-case-facts").innerText();
  expect(facts).toContain(first.id);
  expect(facts).toContain(`expected ${first.expected}`);
  const passed = nodeAnswer.trim().toLowerCase().startsWith(first.expected);
  expect(await page.getByTestId("pg-plain-verdict").innerText()).toBe(`${passed ? "pass" : "fail"} (yesNo)`);

  // The token strip: one button per answer token, its top-k on hover and on keyboard focus.
  const tokens = page.getByTestId("pg-plain-tokens").getByTestId("answer-token");
  expect(await tokens.count()).toBeGreaterThan(0);
  await tokens.first().hover();
  const topk = page.getByTestId("token-topk");
  await topk.waitFor();
  expect(await topk.locator("tbody tr").count()).toBe(5);
  await page.mouse.move(0, 0);
  await expect.poll(() => topk.count()).toBe(0);
  await tokens.first().focus();
  await topk.waitFor();
  await page.keyboard.press("Escape");
  await expect.poll(() => topk.count()).toBe(0);
  expect(await tokens.first().getAttribute("aria-label")).toMatch(/^token “.+”: probability .+%, entropy .+ nats/);

  // The heatmap: a figure over the image whose name says which map; the mode changes it; a table is its text.
  const heatmap = page.getByTestId("pg-plain-heatmap");
  const figureName = () => heatmap.locator("svg").first().getAttribute("aria-label");
  expect(await figureName()).toMatch(/answer's attention, mean over layers, mean over heads/);
  await page.getByTestId("pg-mode").selectOption("rollout");
  await expect.poll(figureName).toMatch(/rollout/);
  await page.getByTestId("pg-mode").selectOption("head");
  await page.getByTestId("pg-layer").selectOption("2");
  await page.getByTestId("pg-head").selectOption("2");
  await expect.poll(figureName).toMatch(/layer 2, head 2/);
  await heatmap.getByRole("button", { name: "Show as table" }).click();
  expect(await heatmap.locator("table tbody tr").count()).toBeGreaterThanOrEqual(36);
  await heatmap.getByRole("button", { name: /Show as figure|Show as chart|Show the figure/ }).click();

  // The logit lens: the embeddings and one row per layer.
  expect(await page.getByTestId("pg-plain-lens").locator("tbody tr").count()).toBe(3);

  // The attention matrix: drawn on a canvas, read by keyboard, and as text.
  const matrix = page.getByTestId("attention-matrix");
  const inked = () =>
    matrix.locator("canvas").evaluate((c: HTMLCanvasElement) =>
      c
        .getContext("2d")!
        .getImageData(0, 0, c.width, c.height)
        .data.some((v, i) => i % 4 !== 3 && v > 0),
    );
  await expect.poll(inked).toBe(true);
  await matrix.focus();
  await page.keyboard.press("ArrowRight");
  expect(await page.getByTestId("matrix-readout").innerText()).toMatch(
    /^query \d+ “.*” → key 1 “.*”( \(image cell 1\))?: \d/,
  );
  await page.getByTestId("matrix-zoom").selectOption("16");
  expect(await matrix.evaluate((el) => el.getBoundingClientRect().width)).toBeGreaterThan(16 * 40);
  expect(await page.getByTestId("matrix-text").locator("li").count()).toBeGreaterThan(0);
  expect(await page.getByTestId("matrix-legend").innerText()).toMatch(/image tokens \(positions \d+–\d+\)/);

  // The default intervention (reweighting) is answered beside the unmodified answer.
  const intervened = page.getByTestId("pg-intervened");
  await intervened.getByTestId("pg-intervened-answer").waitFor({ timeout: 60_000 });
  expect(await intervened.locator("h3").innerText()).toMatch(/^Under attention \+2 on every image token/);
  expect(await intervened.getByTestId("answer-token").count()).toBeGreaterThan(0);

  expect(await pageWidth()).toBeLessThanOrEqual(1280);
  expect(await seriousViolations()).toEqual([]);
  await shot("playground-answer");
});

it("asks again under an attention-guided crop, side by side with the unmodified answer", async () => {
  await page.getByTestId("pg-intervention").selectOption("crop");
  await page.getByTestId("pg-ask").click();
  const intervened = page.getByTestId("pg-intervened");
  await expect.poll(() => intervened.locator("h3").innerText(), { timeout: 60_000 }).toMatch(/attention-guided crop/);
  expect(await page.getByTestId("pg-plain-answer").innerText()).toBe(nodeAnswer);
  expect(await intervened.getByTestId("pg-intervened-answer").innerText()).not.toBe("");
  // The crop column shows the crop the model saw, not the case's image.
  const background = (id: string) =>
    page
      .getByTestId(id)
      .locator(".figure-canvas")
      .first()
      .evaluate((el) => getComputedStyle(el.closest("[data-testid]")!).getPropertyValue("--image"));
  expect(await background("pg-intervened-heatmap")).toContain("data:image/png");
  expect(await background("pg-plain-heatmap")).toContain("blob:");
  await shot("playground-crop");
});

it("clears the old answer when a new question fails: past the context, or an image the model cannot read", async () => {
  await page.getByTestId("pg-intervention").selectOption("none");
  await page.getByTestId("pg-question").fill(`<image> ${"is there a red circle ? ".repeat(30)}`);
  await page.getByTestId("pg-ask").click();
  const error = page.getByTestId("playground-error");
  await error.waitFor({ timeout: 60_000 });
  expect(await error.innerText()).toMatch(/over tiny-vlm's context length of 128/);
  expect(await page.getByTestId("pg-plain").count()).toBe(0);
  expect(await page.getByTestId("attention-matrix").count()).toBe(0);

  // A good question about a dropped JPEG (decoded in the model worker): answered and mapped, with no verdict.
  await page.getByTestId("pg-question").fill(first.input.prompt);
  const jpeg = await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(96, 96);
    const g = canvas.getContext("2d")!;
    g.fillStyle = "#ccc";
    g.fillRect(0, 0, 96, 96);
    g.fillStyle = "#c00";
    g.beginPath();
    g.arc(48, 48, 20, 0, 2 * Math.PI);
    g.fill();
    return Array.from(new Uint8Array(await (await canvas.convertToBlob({ type: "image/jpeg" })).arrayBuffer()));
  });
  const drop = page.getByTestId("pg-drop").locator('input[type="file"]:not([webkitdirectory])');
  await drop.setInputFiles({ name: "red.jpg", mimeType: "image/jpeg", buffer: Buffer.from(jpeg) });
  await page.getByTestId("pg-plain-answer").waitFor({ timeout: 60_000 });
  expect(await page.getByText("Your image red.jpg").count()).toBe(1);
  expect(await page.getByTestId("pg-plain-verdict").count()).toBe(0);
  expect(await page.getByTestId("pg-plain-heatmap").locator("svg").count()).toBeGreaterThan(0);

  // Then a PNG that does not decode: the answer goes, the file is named.
  const png = readFileSync(join(REPO_ROOT, "public/demo", first.input.image));
  const broken = Buffer.concat([png.subarray(0, 60), png.subarray(png.length - 12)]);
  await drop.setInputFiles({ name: "broken.png", mimeType: "image/png", buffer: broken });
  await expect.poll(() => error.innerText()).toContain("broken.png: a PNG that does not decode");
  expect(await page.getByTestId("pg-plain").count()).toBe(0);

  expect(await seriousViolations()).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
  expect(pageErrors).toEqual([]);
});
