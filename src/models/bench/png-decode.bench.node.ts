/**
 * PNG decode, the fast path (`decodePngFast`) against fast-png's `decode`, in Node and in Chromium, measured
 * side by side in one run: what a model call's image decode costs on each side, and what the fast path saves.
 * Every demo image is decoded once per round by each decoder in turn, rounds alternating, so a busy machine
 * slows both alike; the page runs the same timing function (on its main thread, cross-origin isolated like
 * the app) from a Vite dev server, with Debian's Chromium. Also checks the page's fast path gives fast-png's
 * pixels on every image.
 *
 * `npx tsx src/models/bench/png-decode.bench.node.ts`
 *
 * @example
 * // PNG decode, Node: fast path 0.03 ms vs fast-png 0.10 ms per decode → 3.3× faster …
 */
import { readdirSync, readFileSync } from "node:fs";
import { decode } from "fast-png";
import { chromium } from "playwright-core";
import { createServer, type Plugin } from "vite";
import { chromiumArgs, chromiumPath } from "../../node/chromium.mjs";
import { REPO_ROOT } from "../load.node.ts";
import { decodePngFast } from "../png-decode.ts";
import { median } from "./forward-timing.ts";

const ROUNDS = 20;
const WARM_UP_ROUNDS = 5;

/**
 * Milliseconds per decode over one pass of `decodeOne` through the images. Plain JavaScript with nothing
 * from outside it: the page gets this very function as source text.
 */
function msPerDecode(decodeOne: (bytes: Uint8Array) => unknown, images: readonly Uint8Array[]): number {
  const start = performance.now();
  for (let i = 0; i < images.length; i++) decodeOne(images[i]!);
  return (performance.now() - start) / images.length;
}

/** What the page imports: both decoders, the timing function, and a blank isolated page to run them in. */
function benchPage(): Plugin {
  const id = "virtual:png-decode-bench";
  return {
    name: "evalrx:png-decode-bench",
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load: (loaded) =>
      loaded === `\0${id}`
        ? [
            `export { decode } from "fast-png";`,
            `export { decodePngFast } from "/src/models/png-decode.ts";`,
            `export const msPerDecode = ${msPerDecode.toString()};`,
          ].join("\n")
        : undefined,
    configureServer(server) {
      server.middlewares.use("/png-decode-bench.html", (_req, res) => {
        res.setHeader("Content-Type", "text/html");
        res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
        res.setHeader("Cross-Origin-Embedder-Policy", "require-corp");
        res.end(
          `<!doctype html><title>PNG decode bench</title><script type="module">import "/@id/__x00__${id}";</script>`,
        );
      });
    },
  };
}

type PageBench = {
  decode: typeof decode;
  decodePngFast: typeof decodePngFast;
  msPerDecode: typeof msPerDecode;
};

const dir = `${REPO_ROOT}public/demo/images/`;
const images = readdirSync(dir)
  .filter((f) => f.endsWith(".png"))
  .map((f) => new Uint8Array(readFileSync(dir + f)));

const executablePath = chromiumPath();
if (!executablePath) throw new Error("the PNG decode bench needs Chromium: install it or set CHROMIUM_PATH");
// No HMR or file watching: a file rewritten mid-run must not reload the page.
const server = await createServer({
  logLevel: "warn",
  server: { port: 0, hmr: false, watch: null },
  plugins: [benchPage()],
});
await server.listen();
const browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
try {
  const page = await browser.newPage();
  await page.goto(`${server.resolvedUrls!.local[0]!}png-decode-bench.html`, { timeout: 180_000 });
  const module = "/@id/__x00__virtual:png-decode-bench";
  const sent = { module, images: images.map((b) => Array.from(b)) };
  // The dev server may reload the page once while it optimises dependencies: retry after a reload.
  const inPage = async <R>(fn: (arg: typeof sent) => Promise<R>): Promise<R> => {
    for (let attempt = 0; ; attempt++) {
      try {
        await page.waitForLoadState("networkidle");
        return await page.evaluate(fn, sent);
      } catch (error) {
        if (attempt >= 2 || !String(error).includes("context was destroyed")) throw error;
      }
    }
  };
  const pageInfo = await inPage(async (arg) => {
    const bench = (await import(/* @vite-ignore */ arg.module)) as PageBench;
    const pngs = arg.images.map((a) => Uint8Array.from(a));
    (globalThis as { pngs?: Uint8Array[] }).pngs = pngs;
    const same = pngs.filter((png) => {
      const fast = bench.decodePngFast(png);
      const reference = bench.decode(png);
      return fast && fast.data.length === reference.data.length && fast.data.every((v, i) => v === reference.data[i]);
    }).length;
    return { same, isolated: crossOriginIsolated, agent: navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? "" };
  });
  const pageRound = () =>
    inPage(async (arg) => {
      const bench = (await import(/* @vite-ignore */ arg.module)) as PageBench;
      const pngs = (globalThis as { pngs?: Uint8Array[] }).pngs!;
      return [bench.msPerDecode(bench.decodePngFast, pngs), bench.msPerDecode(bench.decode, pngs)] as const;
    });

  const times = {
    nodeFast: [] as number[],
    nodeFastPng: [] as number[],
    pageFast: [] as number[],
    pageFastPng: [] as number[],
  };
  for (let r = 0; r < WARM_UP_ROUNDS + ROUNDS; r++) {
    const nodeFast = msPerDecode(decodePngFast, images);
    const nodeFastPng = msPerDecode(decode, images);
    const [pageFast, pageFastPng] = await pageRound();
    if (r < WARM_UP_ROUNDS) continue;
    times.nodeFast.push(nodeFast);
    times.nodeFastPng.push(nodeFastPng);
    times.pageFast.push(pageFast);
    times.pageFastPng.push(pageFastPng);
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<
    keyof typeof times,
    number
  >;
  const f = (ms: number) => ms.toFixed(3);
  const side = (label: string, fast: number, fastPng: number) =>
    `PNG decode, ${label}: fast path ${f(fast)} ms vs fast-png ${f(fastPng)} ms per decode → ${(fastPng / fast).toFixed(1)}× faster`;
  console.log(
    `${images.length} demo images (${images[0]!.length} bytes, ${decode(images[0]!).width}×${decode(images[0]!).height}, first); medians of ${ROUNDS} rounds after ${WARM_UP_ROUNDS} warm-up, interleaved`,
  );
  console.log(side(`Node ${process.version}`, m.nodeFast, m.nodeFastPng));
  console.log(
    side(
      `Chromium ${pageInfo.agent} main thread${pageInfo.isolated ? "" : " (not cross-origin isolated)"}`,
      m.pageFast,
      m.pageFastPng,
    ),
  );
  console.log(
    `  page vs Node: fast path ${(m.pageFast / m.nodeFast).toFixed(1)}×, fast-png ${(m.pageFastPng / m.nodeFastPng).toFixed(1)}×; ` +
      `the page's fast path gave fast-png's pixels on ${pageInfo.same} of ${images.length} images`,
  );
} finally {
  await browser.close();
  await server.close();
}
