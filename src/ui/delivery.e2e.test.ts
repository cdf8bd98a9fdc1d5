/**
 * Delivery from `vite preview` (`npm start`): the wasm runtime and the bundled models go out precompressed
 * (`.br`, `.gz` written at build time) with their `Content-Encoding` and unpack to the very bytes built; a
 * request that repeats the ETag gets 304 (nothing sent again); Vite's hashed assets go out compressed and
 * immutable; the service worker script is always revalidated.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../node/browser-harness.ts";

let harness: BrowserHarness;
beforeAll(async () => {
  harness = await startBrowserHarness();
});
afterAll(async () => harness?.close());

it("serves the wasm and the models precompressed, revalidates them with 304, and marks hashed assets immutable", async () => {
  const wasm = "ort/ort-wasm-simd-threaded.wasm";
  const raw = statSync(join(harness.outDir, wasm)).size;
  const br = statSync(join(harness.outDir, `${wasm}.br`)).size;
  expect(br).toBeLessThan(raw / 2);
  const page = await harness.context.newPage();
  await page.goto(harness.url);
  const got = await page.evaluate(async (path) => {
    const r = await fetch(`/${path}`, { cache: "no-store" });
    return {
      encoding: r.headers.get("Content-Encoding"),
      type: r.headers.get("Content-Type"),
      etag: r.headers.get("ETag"),
      bytes: (await r.arrayBuffer()).byteLength,
    };
  }, wasm);
  expect(got).toMatchObject({ encoding: "br", type: "application/wasm", bytes: raw });
  const again = await page.request.get(`${harness.url}${wasm}`, {
    headers: { "Accept-Encoding": "br", "If-None-Match": got.etag! },
  });
  expect(again.status()).toBe(304);
  const gz = await page.request.get(`${harness.url}models/tiny-vlm/config.json`, {
    headers: { "Accept-Encoding": "gzip" },
  });
  expect(gz.headers()["content-encoding"]).toBe("gzip");
  expect(JSON.parse(await gz.text())).toEqual(
    JSON.parse(readFileSync(join(harness.outDir, "models/tiny-vlm/config.json"), "utf8")),
  );
  const plain = await page.request.get(`${harness.url}${wasm}`, { headers: { "Accept-Encoding": "identity" } });
  expect(plain.headers()["content-encoding"]).toBeUndefined();
  expect((await plain.body()).length).toBe(raw);
  const script = await page.locator("script[type=module][src]").first().getAttribute("src");
  expect(script).toMatch(/^\/assets\/.+-[\w-]{8,}\.js$/);
  const asset = await page.request.get(`${harness.url}${script!.slice(1)}`, { headers: { "Accept-Encoding": "br" } });
  expect(asset.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
  expect(asset.headers()["content-encoding"]).toBe("br");
  expect(await asset.text()).toBe(readFileSync(join(harness.outDir, script!.slice(1)), "utf8"));
  // The service worker is always revalidated, so a new build is found on the next visit.
  const sw = await page.request.get(`${harness.url}sw.js`);
  expect(sw.headers()["cache-control"]).toBe("no-cache");
  expect(await sw.text()).toMatch(/^const __EVALRX_PRECACHE__ = \{"version":"[0-9a-f]{16}"/);
});
