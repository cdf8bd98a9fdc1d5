/**
 * Seeded synthetic eval logs with known truth, for the validity tests and
 * `bench:validity`: one planted signal that really moves the failure rate
 * (or none, for a null log), and noise columns of every kind that do not.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

export interface SyntheticOptions {
  readonly seed: number;
  /** Cases (default 600). */
  readonly n?: number;
  /**
   * Log-odds of failure per standard deviation of the planted numeric signal
   * `planted` (default 1; 0 makes a null log where `planted` is noise too).
   */
  readonly effect?: number;
  /** Failure share when the planted signal is at its mean (default 0.3). */
  readonly baseRate?: number;
  /** Noise columns per kind: numeric, binary, ordinal, categorical (default 3 each). */
  readonly noise?: number;
  /** Cases per cluster; 1 (default) means no cluster column. */
  readonly clusterSize?: number;
}

/** One row of a synthetic eval log (what a tool would write per case). */
export type SyntheticRow = Record<string, string | number | boolean>;

/**
 * A synthetic eval log and what is true about it. Rows carry `id`, `prompt`,
 * `passed`, `planted` (numeric, raises failure when `effect` > 0), noise
 * columns `noise_num_k`, `noise_bin_k`, `noise_ord_k`, `noise_cat_k`, a
 * constant column `model_name`, an identifier-like `row` and, with clusters, `cluster`.
 *
 * Example: `syntheticLog({ seed: 3 }).rows[0]` →
 * `{ id: "case-0000", prompt: "q0", passed: true, planted: 0.41, noise_num_0: -1.2, … }`.
 */
export function syntheticLog(options: SyntheticOptions): {
  rows: SyntheticRow[];
  planted: string | null;
  noise: string[];
} {
  const n = options.n ?? 600;
  const effect = options.effect ?? 1;
  const base = options.baseRate ?? 0.3;
  const k = options.noise ?? 3;
  const clusterSize = options.clusterSize ?? 1;
  const rng = xoroshiro128plus(options.seed);
  const u = () => uniformFloat64(rng);
  const normal = () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  const intercept = Math.log(base / (1 - base));
  const rows: SyntheticRow[] = [];
  let clusterEffect = 0;
  for (let i = 0; i < n; i++) {
    // A shared random intercept per cluster makes cases in a cluster fail together, as real clusters do.
    if (i % clusterSize === 0) clusterEffect = clusterSize > 1 ? 0.8 * normal() : 0;
    const planted = normal();
    const logit = intercept + effect * planted + clusterEffect;
    const failed = u() < 1 / (1 + Math.exp(-logit));
    const row: SyntheticRow = {
      id: `case-${String(i).padStart(4, "0")}`,
      prompt: `q${i}`,
      passed: !failed,
      planted: Number(planted.toFixed(4)),
      model_name: "tiny",
      row: i,
    };
    for (let j = 0; j < k; j++) {
      row[`noise_num_${j}`] = Number(normal().toFixed(4));
      row[`noise_bin_${j}`] = u() < 0.4;
      row[`noise_ord_${j}`] = Math.floor(u() * 5);
      row[`noise_cat_${j}`] = ["red", "green", "blue"][Math.floor(u() * 3)]!;
    }
    if (clusterSize > 1) row.cluster = `c${Math.floor(i / clusterSize)}`;
    rows.push(row);
  }
  const noise = Array.from({ length: k }, (_, j) => [
    `noise_num_${j}`,
    `noise_bin_${j}`,
    `noise_ord_${j}`,
    `noise_cat_${j}`,
  ]).flat();
  return { rows, planted: effect !== 0 ? "planted" : null, noise: effect !== 0 ? noise : ["planted", ...noise] };
}

/** The rows as CSV text (header first; no value here needs quoting). */
export function toCsv(rows: readonly SyntheticRow[]): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return [columns.join(","), ...rows.map((r) => columns.map((c) => String(r[c] ?? "")).join(","))].join("\n") + "\n";
}

/** The rows as JSONL text. */
export function toJsonl(rows: readonly SyntheticRow[]): string {
  return rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
}
