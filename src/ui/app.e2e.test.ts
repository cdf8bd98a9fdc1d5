import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../node/browser-harness.ts";
import { ROUTES } from "./app/routes.ts";

let harness: BrowserHarness;
beforeAll(async () => {
  harness = await startBrowserHarness();
});
afterAll(async () => harness?.close());

it("loads the built app, shows the backend, runs ONNX Runtime WASM in a worker, and never leaves localhost", async () => {
  const page = await harness.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  const workers: string[] = [];
  page.on("worker", (worker) => workers.push(worker.url()));

  await page.goto(harness.url);
  const backend = page.getByTestId("backend");
  await backend.waitFor({ timeout: 120_000 });
  expect(await backend.textContent()).toMatch(/^Backend: (WebGPU|WASM) — .+/);
  // The self-test ran double.onnx through ORT's WASM build inside the model worker.
  expect(await page.getByTestId("ort").textContent()).toContain("WASM self-test 2, 4");
  expect(workers.some((url) => url.includes("model.worker"))).toBe(true);
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  // The page opened its IndexedDB store, asked for persistent storage, and shows what it uses.
  await page.getByTestId("storage").waitFor();
  const storage = (await page.getByTestId("storage").textContent())?.replace(/\s+/g, " ").trim();
  expect(storage).toMatch(/^Storage: [\d.]+ (B|KB|MB|GB) used of [\d.]+ (KB|MB|GB|TB); (persistent|not persistent)/);

  expect(errors).toEqual([]);
  expect(harness.foreignRequests).toEqual([]);
});

it("an unknown address shows a not-found page that lists every page, and each link opens its page", async () => {
  const page = await harness.context.newPage();
  await page.goto(`${harness.url}#/no/such/page`);
  const notFound = page.getByTestId("not-found");
  await notFound.waitFor();
  expect(await notFound.getByRole("heading").textContent()).toContain("#/no/such/page");
  const links = notFound.getByRole("link");
  expect(await links.count()).toBe(ROUTES.length);
  await notFound.getByRole("link", { name: "#/settings" }).click();
  await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
  expect(await page.evaluate(() => location.hash)).toBe("#/settings");
  // The browser's back button returns to the address asked for.
  await page.goBack();
  await notFound.waitFor();
});

it("every page passes an axe-core scan with no serious or critical violation", async () => {
  const axe = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const found: string[] = [];
  for (const route of [...ROUTES.map((r) => r.pattern.replace(/[[?].*$/, "")), "#/nope"]) {
    await page.goto(`${harness.url}${route}`);
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    await page.waitForTimeout(500);
    // Evaluated, not injected as a script tag, so a Content Security Policy does not stop it.
    await page.evaluate(axe);
    const violations = await page.evaluate(async () => {
      const result = await (
        window as unknown as {
          axe: {
            run(): Promise<{
              violations: { id: string; impact: string; help: string; nodes: { target: unknown }[] }[];
            }>;
          };
        }
      ).axe.run();
      return result.violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
    });
    for (const v of violations) found.push(`${route}: ${v}`);
    // Nothing is wider than the window at 1280 px.
    expect(await page.evaluate(() => document.documentElement.scrollWidth), route).toBeLessThanOrEqual(1280);
  }
  expect(found).toEqual([]);
});

it("the request guard sees and blocks requests to other hosts, from the page and from workers", async () => {
  const page = await harness.context.newPage();
  await page.goto(harness.url);
  const before = harness.foreignRequests.length;
  // The app's CSP already refuses most hosts before a request is made; the hub is one it allows, so a request
  // to it reaches the network layer, where the harness's guard must see and block it.
  await page.evaluate(async () => {
    await fetch("https://huggingface.co/from-page").catch(() => undefined);
    const source = 'fetch("https://huggingface.co/from-worker").catch(() => 0).then(() => postMessage("done"));';
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
    await new Promise((resolve) => worker.addEventListener("message", resolve));
    worker.terminate();
  });
  expect(harness.foreignRequests.slice(before).sort()).toEqual([
    "https://huggingface.co/from-page",
    "https://huggingface.co/from-worker",
  ]);
  harness.foreignRequests.splice(before);
});

it("loads each page's code when the page is opened: a slow chunk shows a loading line, a missing one says to reload", async () => {
  // Service workers off, so every chunk request reaches the network layer, where these routes hold or fail it.
  const context = await harness.context.browser()!.newContext({ serviceWorkers: "block" });
  try {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const chunks: string[] = [];
    page.on("request", (request) => {
      const name = /\/assets\/([A-Za-z]+Page)-[\w-]+\.js$/.exec(request.url())?.[1];
      if (name) chunks.push(name);
    });
    await page.goto(`${harness.url}#/settings`);
    await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    // Only the page opened was fetched, not every page of the app.
    expect(chunks).toEqual(["SettingsPage"]);

    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    await page.route(/\/assets\/ReportPage-[\w-]+\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    await page.evaluate(() => (location.hash = "#/report"));
    const loading = page.getByTestId("page-loading");
    await loading.waitFor();
    expect(await loading.textContent()).toContain("Loading the Reports page…");
    release();
    await page.getByTestId("open-report").waitFor();
    expect(await loading.count()).toBe(0);

    // A chunk the server no longer has (the app was updated under this tab): the reason, and the way out.
    await page.route(/\/assets\/ComparePage-[\w-]+\.js$/, (route) => route.fulfill({ status: 404, body: "gone" }));
    await page.evaluate(() => (location.hash = "#/compare"));
    const failed = page.getByTestId("page-load-error");
    await failed.waitFor();
    expect(await failed.getByRole("heading", { level: 1 }).textContent()).toBe("This page could not be loaded");
    expect(await failed.textContent()).toMatch(
      /The Compare page's code could not be loaded \(assets\/ComparePage-[\w-]+\.js.*\)\. .*Reload the page to load the current version/,
    );
    await failed.getByRole("button", { name: "Reload" }).waitFor();
    // The rest of the app still works: a page loaded before opens at once.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Reports" }).click();
    await page.getByTestId("open-report").waitFor();
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
});
