import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../node/browser-harness.ts";

let harness: BrowserHarness;
beforeAll(async () => {
  harness = await startBrowserHarness();
});
afterAll(async () => harness?.close());

it("the playground loads tiny-vlm from the built app, answers a demo question and overlays attention on the image", async () => {
  const page = await harness.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${harness.url}#/playground`);
  const answer = page.getByTestId("answer");
  await answer.waitFor({ timeout: 150_000 });
  expect(["yes", "no"]).toContain(await answer.textContent());
  expect(await page.getByTestId("model-status").textContent()).toMatch(
    /tiny-vlm on (WebGPU|WASM) — .+;\s+attention exported/,
  );
  // The answer comes first; the overlay follows from the teacher-forced forward.
  await page.getByTestId("overlay").waitFor({ timeout: 60_000 });
  const cells = page.getByTestId("overlay").locator(".cell");
  expect(await cells.count()).toBe(36);
  expect(await page.getByText("attention over the 6×6 image grid").count()).toBe(1);
  const opacities = await cells.evaluateAll((els) => els.map((el) => Number((el as HTMLElement).style.opacity)));
  expect(Math.max(...opacities)).toBeCloseTo(0.75, 3);
  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});

it("the built app serves model files under /models/ and answers 404 for missing ones (never index.html)", async () => {
  const page = await harness.context.newPage();
  await page.goto(harness.url);
  const statuses = await page.evaluate(async () => {
    const ok = await fetch("/models/tiny-vlm/config.json");
    const missing = await fetch("/models/tiny-vlm/no-such-file.json");
    return { ok: ok.status, type: ok.headers.get("Content-Type"), missing: missing.status };
  });
  expect(statuses.ok).toBe(200);
  expect(statuses.missing).toBe(404);
});
