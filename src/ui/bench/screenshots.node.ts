/**
 * Screenshots of every page of the built app at 1280×900 in the system
 * Chromium, for the README and for looking at what a person sees:
 * `npm run screenshots [-- --out DIR] [-- route ...]`.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startBrowserHarness } from "../../node/browser-harness.ts";

const { values, positionals } = parseArgs({
  options: { out: { type: "string", default: "tmp/screens" }, wait: { type: "string", default: "1500" } },
  allowPositionals: true,
});
const routes = positionals.length
  ? positionals
  : ["#/", "#/models", "#/datasets", "#/runs", "#/compare", "#/playground", "#/settings", "#/no-such-page"];
const out = resolve(values.out!);
mkdirSync(out, { recursive: true });
const harness = await startBrowserHarness();
try {
  const page = await harness.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  for (const route of routes) {
    await page.goto(`${harness.url}${route}`);
    await page.waitForTimeout(Number(values.wait));
    const name = route.replace(/^#\/?/, "").replace(/[^\w-]+/g, "_") || "library";
    const file = join(out, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    console.log(`${route} → ${file}${wide ? "  (WIDER THAN THE WINDOW)" : ""}`);
  }
  if (errors.length) console.log(`page errors:\n${errors.join("\n")}`);
  if (harness.foreignRequests.length) console.log(`foreign requests: ${harness.foreignRequests.join(", ")}`);
} finally {
  await harness.close();
}
