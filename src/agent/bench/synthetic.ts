/**
 * Seeded synthetic eval logs with known truth, for the validity tests and
 * `bench:validity`: one planted signal that really moves the failure rate
 * (or none, for a null log), and noise columns of every kind that do not —
 * optionally in clusters with a random intercept, with signals that vary
 * within clusters or are constant within each (an image-level property).
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { seededRng } from "../../stats/rng.ts";

export interface SyntheticOptions {
  readonly seed: number;
  /** Cases (default 600). */
  readonly n?: number;
  /** The planted signal: numeric (default) or binary. */
  readonly planted?: "numeric" | "binary";
  /**
   * Numeric: log-odds of failure per standard deviation of `planted` (default 1). Binary: the
   * failure points the factor adds (e.g. 0.1: 30% → 40%). 0 makes a null log where `planted` is noise too.
   */
  readonly effect?: number;
  /** Failure share when the planted signal is at its mean (numeric) or absent (binary) (default 0.3). */
  readonly baseRate?: number;
  /** Binary planted factor: share of cases (clusters, when cluster-level) that have it (default 0.5). */
  readonly prevalence?: number;
  /** Noise columns per kind: numeric, binary, ordinal, categorical (default 3 each). */
  readonly noise?: number;
  /** Cases per cluster; 1 (default) means no cluster column. */
  readonly clusterSize?: number;
  /** SD of the clusters' random intercept on the failure log-odds (default 0.8). */
  readonly clusterSd?: number;
  /** The planted signal is a property of the cluster (constant within it), not of the case. */
  readonly plantedClusterLevel?: boolean;
  /** Share of the noise columns that are constant within clusters (default 0.5 with clusters). */
  readonly noiseClusterLevel?: number;
}

/** One row of a synthetic eval log (what a tool would write per case). */
export type SyntheticRow = Record<string, string | number | boolean>;

/**
 * A synthetic eval log and what is true about it. Rows carry `id`, `prompt`,
 * `passed`, `planted` (numeric or binary, raises failure when `effect` > 0), noise
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
  const kind = options.planted ?? "numeric";
  const effect = options.effect ?? (kind === "binary" ? 0.1 : 1);
  const base = options.baseRate ?? 0.3;
  const prevalence = options.prevalence ?? 0.5;
  const k = options.noise ?? 3;
  const clusterSize = options.clusterSize ?? 1;
  const clusterSd = options.clusterSd ?? 0.8;
  const noiseShared = clusterSize > 1 ? (options.noiseClusterLevel ?? 0.5) : 0;
  const rng = seededRng("syntheticLog", options.seed);
  const u = () => uniformFloat64(rng);
  const normal = () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  const intercept = Math.log(base / (1 - base));
  // Which noise columns are cluster-level: the first ⌈share·k⌉ of each kind.
  const sharedCount = Math.ceil(noiseShared * k);
  const draw = {
    num: () => Number(normal().toFixed(4)),
    bin: () => u() < 0.4,
    ord: () => Math.floor(u() * 5),
    cat: () => ["red", "green", "blue"][Math.floor(u() * 3)]!,
  };
  const rows: SyntheticRow[] = [];
  let clusterEffect = 0;
  let clusterPlanted = 0;
  let clusterNoise: Record<string, string | number | boolean> = {};
  for (let i = 0; i < n; i++) {
    if (i % clusterSize === 0) {
      // A shared random intercept per cluster makes cases in a cluster fail together, as real clusters do.
      clusterEffect = clusterSize > 1 ? clusterSd * normal() : 0;
      clusterPlanted = kind === "binary" ? (u() < prevalence ? 1 : 0) : normal();
      clusterNoise = {};
      for (let j = 0; j < sharedCount; j++)
        for (const [name, f] of Object.entries(draw)) clusterNoise[`noise_${name}_${j}`] = f();
    }
    const planted =
      options.plantedClusterLevel && clusterSize > 1
        ? clusterPlanted
        : kind === "binary"
          ? u() < prevalence
            ? 1
            : 0
          : normal();
    let failed: boolean;
    if (kind === "binary") {
      // The factor adds `effect` to the case's failure probability (its cluster's, with clusters).
      const p0 = 1 / (1 + Math.exp(-(intercept + clusterEffect)));
      const p = Math.min(1, Math.max(0, p0 + (planted ? effect : 0)));
      failed = u() < p;
    } else failed = u() < 1 / (1 + Math.exp(-(intercept + effect * planted + clusterEffect)));
    const row: SyntheticRow = {
      id: `case-${String(i).padStart(4, "0")}`,
      prompt: `q${i}`,
      passed: !failed,
      planted: kind === "binary" ? planted === 1 : Number(planted.toFixed(4)),
      model_name: "tiny",
      row: i,
    };
    for (let j = 0; j < k; j++)
      for (const [name, f] of Object.entries(draw)) {
        const column = `noise_${name}_${j}`;
        row[column] = j < sharedCount ? clusterNoise[column]! : f();
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
