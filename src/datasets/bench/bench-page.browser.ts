// The page side of bench-data.node.ts: streams a JSONL file from the server (as a dropped File's
// stream() would be read) through ingest() into a fresh IndexedDB store, and reports the time taken.
import { IdbStore } from "../../store/idb.browser.ts";
import { ingest } from "../ingest.ts";
import { nullSink, type BenchResult } from "./null-sink.ts";

async function run(url: string, target: "idb" | "none"): Promise<BenchResult> {
  const name = `evalrx-bench-${Date.now()}`;
  const idb = await IdbStore.open(name);
  const store = target === "idb" ? idb : nullSink;
  try {
    const response = await fetch(url);
    if (!response.ok || !response.body) throw new Error(`bench file: HTTP ${response.status}`);
    const start = performance.now();
    const result = await ingest(store, response.body, { datasetId: "bench", name: "bench.jsonl" });
    const seconds = (performance.now() - start) / 1000;
    return {
      rows: result.rows,
      added: result.added,
      problems: result.problems.length,
      seconds,
      version: result.dataset.version,
    };
  } finally {
    await idb.close();
    await IdbStore.destroy(name);
  }
}

(window as unknown as { runBench: typeof run }).runBench = run;
document.title = "ready";
