/**
 * The records an analysis sees: the exploration split only, one record per
 * case (id, failure label, cluster, every signal as a JSON scalar). The
 * sealed split is not a parameter anywhere here: it stays behind its guard.
 */
import { sha256Hex } from "../../datasets/hash.ts";
import type { CaseTable } from "../signals.ts";
import type { AnalysisInput, AnalysisRecord, Cell } from "./protocol.ts";

function scalar(x: unknown): Cell {
  if (x === null || x === undefined) return null;
  if (typeof x === "number") return Number.isFinite(x) ? x : null;
  if (typeof x === "string" || typeof x === "boolean") return x;
  return null;
}

/**
 * Which records and signals does the analysis get, and what identifies them? The exploration table as
 * records, the JSON text that is sent, and its fingerprint (sha256 of that text), which the log keeps
 * beside the code so the analysis can be rerun on exactly the same input.
 *
 * @example analysisInput({ ids: ["a"], failed: [true], columns: new Map([["x", [1]]]) }).input.records[0] // { id: "a", failed: true, signals: { x: 1 } }
 */
export function analysisInput(explore: CaseTable): { input: AnalysisInput; json: string; fingerprint: string } {
  const signals = [...explore.columns.keys()].sort();
  const records: AnalysisRecord[] = explore.ids.map((id, i) => ({
    id,
    failed: explore.failed[i]!,
    ...(explore.clusters ? { cluster: explore.clusters[i]! } : {}),
    signals: Object.fromEntries(signals.map((name) => [name, scalar(explore.columns.get(name)![i])])),
  }));
  const input: AnalysisInput = { split: "explore", signals, records };
  const json = JSON.stringify(input);
  return { input, json, fingerprint: `sha256:${sha256Hex(json)}` };
}
