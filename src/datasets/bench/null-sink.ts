import type { DatasetSink } from "../ingest.ts";

/** A sink that keeps nothing: the same import without the store, to see what the store itself costs. */
export const nullSink: DatasetSink = {
  getDataset: async () => undefined,
  putDataset: async () => undefined,
  addCases: async (_id, cases) => cases.length,
  cases: async () => [],
  putImage: async () => "",
};

/** What the page reports back to bench-data.node.ts for one import. */
export interface BenchResult {
  rows: number;
  added: number;
  problems: number;
  seconds: number;
  version: string;
}
