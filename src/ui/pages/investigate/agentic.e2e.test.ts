/**
 * The agentic option in the built app with the user's OpenAI-compatible endpoint as the judge: a local test server
 * that speaks the protocol (`boardServer`, the CLI test's; it answers as the rule policy would, its own analysis
 * included) is reached from the page's job worker under the app's CSP (loopback) and CORS, with the key typed in the
 * form; the analysis runs in the locked sandbox worker (nested in the job worker), and the agentic panel lists every
 * turn up to the stop. A 60-case sample and the L1 ceiling keep it short. The second test takes the third judge, a
 * bundled model (tiny-lm) run for real in the page's model worker: the board does not fit its 64-token context (nor
 * could it write a tool call), so the host must refuse each turn with the model's reason, end the run at its turn
 * limit without a claim, and the report must show that path. Set AGENTIC_SCREENS=<dir> to write screenshots (the forms, the finished runs and the report at 1280×900).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { boardServer, type BoardServer } from "../../../agent/agentic/board-server.node.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../node/browser-harness.ts";

const screens = process.env["AGENTIC_SCREENS"];
let harness: BrowserHarness;
let server: BoardServer;
beforeAll(async () => {
  [harness, server] = await Promise.all([startBrowserHarness(), boardServer({ analysis: true, searchProbes: true })]);
}, 300_000);
afterAll(async () => {
  await harness?.close();
  await server?.close();
});

/** A screenshot of the whole page, or (a long report) of the 1280×900 viewport alone. */
async function shot(page: Page, name: string, fullPage = true) {
  if (!screens) return;
  mkdirSync(screens, { recursive: true });
  await page.screenshot({ path: join(screens, `${name}.png`), fullPage });
}

it("runs the judge-decided loop in the page with the user's endpoint as the judge and shows its path", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(harness.url);
  await page.getByTestId("library-add-demo").click();
  await page.getByText(/\b3\b datasets/).waitFor({ timeout: 120_000 });
  await page.goto(`${harness.url}#/investigate`);
  await page.getByTestId("investigate-dataset").selectOption("pope");
  await page.getByTestId("investigate-sample").fill("60");
  await page.getByTestId("investigate-ceiling").selectOption("L1");
  await page.getByTestId("investigate-agentic").check();
  await page.getByTestId("judge-endpoint").check();
  await page.getByTestId("judge-url").fill("https://judge.example.com/v1");
  await expect
    .poll(() => page.getByTestId("investigate-form-error").textContent())
    .toMatch(/only to endpoints on this machine/);
  await page.getByTestId("judge-url").fill(server.baseUrl);
  await page.getByTestId("judge-model-name").fill("board-reader");
  await page.getByTestId("judge-key").fill("test-key");
  await page.getByTestId("investigate-search-probes").check();
  await page.getByTestId("investigate-probe-budget").fill("40");
  await page.getByTestId("investigate-judge-paraphrases").check();
  await page.getByTestId("investigate-max-turns").fill("12");
  await expect.poll(() => page.locator("pre.cli").textContent()).toContain("--judge-paraphrases");
  expect(await page.locator("pre.cli").textContent()).toContain("--max-turns 12");
  await expect.poll(() => page.getByTestId("investigate-plan").textContent()).toContain("60 cases");
  await shot(page, "agentic-form");
  await page.getByTestId("start-investigation").click();
  await page.waitForURL(/#\/investigate\/investigate-/, { timeout: 120_000 });
  await page
    .getByTestId("agentic-panel")
    .waitFor({ timeout: 120_000 })
    .catch(async (error: unknown) => {
      await shot(page, "agentic-stuck");
      throw error;
    });
  await expect
    .poll(() => page.getByTestId("investigation-status").textContent(), { timeout: 300_000, interval: 500 })
    .toBe("finished");
  const turns = page.getByTestId("agentic-turns").locator("li");
  expect(await turns.count()).toBeGreaterThanOrEqual(6);
  expect(await page.getByTestId("agentic-panel").textContent()).toMatch(/of 12 turns/);
  expect(await turns.first().textContent()).toContain("run_probe");
  expect(await page.getByTestId("agentic-panel").textContent()).toContain(
    `openai:${new URL(server.baseUrl).origin}/v1/chat/completions#board-reader`,
  );
  // Every turn was one chat-completions request from the page, with the key typed in the form.
  const boards = server.requests.filter((r) => r.messages.at(-1)!.content.includes("Evidence board")).length;
  expect(boards).toBe(await turns.count());
  expect(server.authorizations.every((a) => a === "Bearer test-key")).toBe(true);
  // The probe search asked the same endpoint to reword the seeds' questions, and kept only the checked wordings.
  expect(await page.getByTestId("agentic-turns").textContent()).toContain("search_probes");
  expect(server.requests.some((r) => r.messages.at(-1)!.content.startsWith("Rewrite this yes/no question"))).toBe(true);
  // The analysis turn ran in the sandbox worker, which the app serves with its own policy (code from strings, no
  // connections): A1 returned its tables instead of the CSP's EvalError.
  const board = await page.getByTestId("agentic-turns").textContent();
  expect(board).toMatch(/run_analysis\s*ran\s*A1: \d+ table/);
  expect(board).not.toMatch(/A1 failed/);
  expect(await page.getByTestId("agentic-stop").textContent()).toMatch(/The judge stopped/);
  // A1's bar figure is drawn in the panel and in the report, one bar per signal it returned.
  const panelBars = page.locator(
    '[data-testid="agentic-analysis-A1"] [data-testid="figure-analysis-A1-figure-1"] rect.bar',
  );
  const bars = await panelBars.count();
  expect(bars).toBeGreaterThan(0);
  await shot(page, "agentic-finished");
  await page.getByTestId("open-report").click();
  const figure = page.getByTestId("section-analyses").getByTestId("figure-analysis-A1-figure-1");
  await figure.waitFor({ timeout: 60_000 });
  expect(await figure.locator("rect.bar").count()).toBe(bars);
  expect(await figure.locator("svg").getAttribute("aria-label")).toMatch(
    /^Largest standardized differences: \d+ bars?; /,
  );
  await figure.scrollIntoViewIfNeeded();
  await shot(page, "agentic-report-analysis", false);
  expect(errors).toEqual([]);
}, 420_000);

it("runs the loop with a bundled model in the page as the judge: every turn it cannot answer refused with the reason, and the report shows the path", async () => {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(harness.url);
  // The first test may have added the demo datasets to this browser context's store already (and its probe search a
  // grown version). The button shows until the store has listed its datasets, so wait for the count, not the button.
  const added = page.getByText(/\b([3-9]|\d\d+) datasets/);
  const present = await added.waitFor({ timeout: 15_000 }).then(
    () => true,
    () => false,
  );
  if (!present) await page.getByTestId("library-add-demo").click();
  await added.waitFor({ timeout: 120_000 });
  await page.goto(`${harness.url}#/investigate`);
  await page.getByTestId("investigate-dataset").selectOption("pope");
  await page.getByTestId("investigate-sample").fill("60");
  await page.getByTestId("investigate-ceiling").selectOption("L1");
  await page.getByTestId("investigate-agentic").check();
  await page.getByTestId("judge-model").check();
  await page.getByTestId("judge-local-model").selectOption("tiny-lm");
  expect(await page.getByTestId("judge-model-help").textContent()).toMatch(/refuse each of its turns/);
  await page.getByTestId("investigate-max-turns").fill("5");
  await expect.poll(() => page.locator("pre.cli").textContent()).toContain("--max-turns 5");
  await expect.poll(() => page.getByTestId("investigate-plan").textContent()).toContain("60 cases");
  await shot(page, "agentic-local-form");
  await page.getByTestId("start-investigation").click();
  await page.waitForURL(/#\/investigate\/investigate-/, { timeout: 120_000 });
  await page.getByTestId("agentic-panel").waitFor({ timeout: 120_000 });
  await expect
    .poll(() => page.getByTestId("investigation-status").textContent(), { timeout: 300_000, interval: 500 })
    .toBe("finished");
  const panel = page.getByTestId("agentic-panel");
  const said = (await panel.textContent()) ?? "";
  expect(said).toContain("model:tiny-lm");
  // The host kept its rules: five turns were asked for and five were taken, each refused with the reason.
  expect(said).toMatch(/5 of 5 turns · 5 refused/);
  const turns = page.getByTestId("agentic-turns").locator("li");
  expect(await turns.count()).toBe(5);
  for (let i = 0; i < 5; i++) {
    const turn = (await turns.nth(i).textContent()) ?? "";
    expect(turn).toContain("refused");
    // The board is longer than tiny-lm's 64-token context: the model refuses the prompt, and the host the turn.
    expect(turn).toMatch(/the judge could not answer: the prompt is \d+ tokens, over tiny-lm's context length of 64/);
  }
  expect(await page.getByTestId("agentic-stop").textContent()).toMatch(
    /no claim\s*The host stopped the run: the judge did not stop within 5 turns/,
  );
  expect(await page.getByTestId("agentic-all-refused").textContent()).toMatch(/The host refused every turn/);
  // The stages the judge never reached say so, not that they are waiting.
  expect(await page.getByTestId("panel-M1").textContent()).toContain(
    "Not run: the judge-decided loop ended without this stage",
  );
  await shot(page, "agentic-local-finished");
  // The report tells the same path: the judge, 5 of 5 turns refused, and each turn's reason.
  await page.getByTestId("open-report").click();
  const section = page.getByTestId("section-agentic");
  await section.waitFor({ timeout: 60_000 });
  const report = (await section.textContent()) ?? "";
  expect(report).toContain("model:tiny-lm");
  expect(report).toContain("5 of 5 (5 refused)");
  expect(report).toContain("The host stopped the run");
  expect((report.match(/the judge could not answer: the prompt is \d+ tokens/g) ?? []).length).toBe(5);
  await section.scrollIntoViewIfNeeded();
  await shot(page, "agentic-local-report", false);
  expect(errors).toEqual([]);
}, 420_000);
