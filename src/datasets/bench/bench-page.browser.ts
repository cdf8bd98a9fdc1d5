// The page side of bench-data.node.ts: streams a JSONL file from the server (as a dropped File's
// stream() would be read) through ingest() into a fresh IndexedDB store, and reports the time taken.
import { IdbStore } from "../../store/idb.browser.ts";
import { ingest, type DatasetSink } from "../ingest.ts";

/** A sink that keeps nothing: the same import without the store, to see what the store itself costs. */
export const nullSink: DatasetSink = {
  getDataset: async () => undefined,
  putDataset: async () => undefined,
  addCases: async (_id, cases) => cases.length,
  cases: async () => [],
  putImage: async () => "",
};

interface BenchResult {
  rows: number;
  added: number;
  problems: number;
  seconds: number;
  version: string;
}

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
