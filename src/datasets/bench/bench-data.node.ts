// npm run bench:data — rows per second and peak memory (as a multiple of the file size) for importing a
// 100k-row, ~50 MB JSONL into the file store (Node, in this process) and into IndexedDB (the system
// Chromium, a page served by Vite). Targets: >= 20k rows/s, peak <= 3x the file.
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { chromium } from "playwright-core";
import { createServer } from "vite";
import { chromiumArgs, chromiumPath } from "../../node/chromium.mjs";
import { FileStore } from "../../store/files.node.ts";
import { ingest } from "../ingest.ts";
import { nullSink, type BenchResult } from "./null-sink.ts";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const work = mkdtempSync(join(tmpdir(), "evalrx-bench-data-"));
const file = join(work, "bench.jsonl");
const MB = 1024 * 1024;

/** A deterministic dataset of ROWS cases, ~500 bytes each: prompts, expected answers, tags, clusters, meta. */
async function writeDataset() {
  const out = createWriteStream(file);
  const words = ["dog", "cat", "car", "tree", "red", "blue", "left", "right", "two", "three", "small", "large"];
  for (let i = 0; i < ROWS; i++) {
    const w = (k: number) => words[(i * 7 + k * 13) % words.length];
    const row = {
      id: `case-${i}`,
      input: {
        prompt: `Question ${i}: is there a ${w(1)} ${w(2)} next to the ${w(3)} ${w(4)} in this picture? Answer yes or no, then explain briefly why, naming the ${w(5)} objects you see. ${"Context. ".repeat(30)}`,
      },
      expected: i % 2 ? "yes" : "no",
      tags: [w(6), i % 3 ? "pope" : "chair"],
      split: ["random", "popular", "adversarial"][i % 3],
      cluster: `img-${Math.floor(i / 4)}`,
      meta: { difficulty: i % 5, source: "bench", objects: i % 11 },
    };
    if (!out.write(JSON.stringify(row) + "\n")) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

function line(label: string, rows: number, seconds: number, peakBytes: number, size: number) {
  const rate = rows / seconds;
  const multiple = peakBytes / size;
  console.log(
    `${label.padEnd(22)} ${rows} rows in ${seconds.toFixed(2)} s = ${Math.round(rate).toLocaleString("en")} rows/s ` +
      `(${(rate / 20_000).toFixed(2)}× the 20k target); peak memory +${(peakBytes / MB).toFixed(1)} MB = ` +
      `${multiple.toFixed(2)}× the file (target ≤ 3×)`,
  );
}

async function benchNode(size: number, target: "files" | "none") {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const base = process.memoryUsage();
  const baseline = base.heapUsed + base.external + base.arrayBuffers;
  let peak = baseline;
  const sample = () => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed + m.external + m.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  const store = target === "files" ? await FileStore.open(join(work, `store-${Date.now()}`)) : nullSink;
  const start = performance.now();
  const result = await ingest(store, createReadStream(file), {
    datasetId: "bench",
    name: "bench.jsonl",
    onProgress: sample,
  });
  const seconds = (performance.now() - start) / 1000;
  clearInterval(timer);
  sample();
  if (result.added !== ROWS || result.problems.length) throw new Error(`file store import: ${JSON.stringify(result)}`);
  line(target === "files" ? "file store (Node)" : "  import only (Node)", result.rows, seconds, peak - baseline, size);
  if (gc) {
    // The peak counts garbage V8 has not collected yet; what the import really holds on to is far less.
    gc();
    const after = process.memoryUsage();
    const retained = after.heapUsed + after.external + after.arrayBuffers - baseline;
    console.log(
      `${"".padEnd(22)} still held after a full GC: ${(retained / MB).toFixed(1)} MB = ${(retained / size).toFixed(2)}× the file`,
    );
  } else console.log("  (run with node --expose-gc for a steadier baseline)");
  return result.dataset.version;
}

async function benchChromium(size: number, targets: ("idb" | "none")[]) {
  const executablePath = chromiumPath();
  if (!executablePath) {
    console.log("IndexedDB (Chromium):  skipped — no Chromium (apt-get install -y chromium, or set CHROMIUM_PATH)");
    return undefined;
  }
  const server = await createServer({
    logLevel: "warn",
    server: { port: 0, host: "localhost" },
    plugins: [
      {
        // The generated file, streamed from disk (the page reads the response body chunk by chunk).
        name: "evalrx:bench-data",
        configureServer(dev) {
          dev.middlewares.use("/bench-data.jsonl", (_req, res) => {
            res.setHeader("Content-Type", "application/x-ndjson");
            res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
            createReadStream(file).pipe(res);
          });
        },
      },
    ],
    optimizeDeps: {
      include: ["idb", "papaparse", "hyparquet", "fflate", "fzstd", "@noble/hashes/sha2.js", "@noble/hashes/utils.js"],
    },
  });
  await server.listen();
  const browser = await chromium.launch({ executablePath, args: chromiumArgs, headless: true });
  try {
    const page = await browser.newPage();
    await page.goto(`${server.resolvedUrls!.local[0]}src/datasets/bench/bench-page.html`);
    await page.waitForFunction(() => document.title === "ready", undefined, { timeout: 120_000 });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const heap = async () => {
      const { metrics } = await cdp.send("Performance.getMetrics");
      return metrics.find((m) => m.name === "JSHeapUsedSize")!.value;
    };
    let version = "";
    for (const target of targets) {
      await cdp.send("HeapProfiler.collectGarbage");
      const baseline = await heap();
      let peak = baseline;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, await heap().catch(() => peak));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const result = await page.evaluate(
        ([url, t]) => (window as unknown as { runBench(u: string, t: string): Promise<BenchResult> }).runBench(url, t),
        ["/bench-data.jsonl", target] as const,
      );
      sampling = false;
      await sampler;
      if (result.added !== ROWS || result.problems) throw new Error(`IndexedDB import: ${JSON.stringify(result)}`);
      line(
        target === "idb" ? "IndexedDB (Chromium)" : "  import only (page)",
        result.rows,
        result.seconds,
        peak - baseline,
        size,
      );
      if (target === "idb") version = result.version;
    }
    return version;
  } finally {
    await browser.close();
    await server.close();
  }
}

try {
  await writeDataset();
  const size = statSync(file).size;
  console.log(`bench:data — ${ROWS} rows, ${(size / MB).toFixed(1)} MB of JSONL`);
  const nodeVersion = await benchNode(size, "files");
  await benchNode(size, "none");
  const pageVersion = await benchChromium(size, ["idb", "none"]);
  if (pageVersion !== undefined)
    console.log(
      `dataset version: Node ${nodeVersion}, Chromium ${pageVersion} (${nodeVersion === pageVersion ? "identical" : "DIFFERENT"})`,
    );
} finally {
  rmSync(work, { recursive: true, force: true });
}
