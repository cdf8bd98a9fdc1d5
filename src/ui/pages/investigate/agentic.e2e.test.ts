/**
 * The agentic option in the built app with the user's OpenAI-compatible endpoint as the judge: a local test server
 * that speaks the protocol (`boardServer`, the CLI test's; it answers as the rule policy would, its own analysis
 * included) is reached from the page's job worker under the app's CSP (loopback) and CORS, with the key typed in the
 * form; the analysis runs in the locked sandbox worker (nested in the job worker), and the agentic panel lists every
 * turn up to the stop. A 60-case sample and the L1 ceiling keep it short. Set AGENTIC_SCREENS=<dir> to
 * write screenshots (the form and the finished run at 1280×900).
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

async function shot(page: Page, name: string) {
  if (!screens) return;
  mkdirSync(screens, { recursive: true });
  await page.screenshot({ path: join(screens, `${name}.png`), fullPage: true });
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
  await shot(page, "agentic-finished");
  expect(errors).toEqual([]);
}, 420_000);
