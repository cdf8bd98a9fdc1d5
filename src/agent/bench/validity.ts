/**
 * The validity study behind the tests and `bench:validity`: run `explore` on
 * seeded synthetic eval logs with known truth and count how often a planted
 * signal is SUPPORTED and how often a pure-noise column is.
 */
import { importTable } from "../../datasets/index.ts";
import type { Calibrator } from "../evalue.ts";
import { exploreCases } from "../run-explore.ts";
import { syntheticLog, type SyntheticOptions } from "./synthetic.ts";

export interface ValidityTally {
  readonly runs: number;
  /** Runs where the planted signal was SUPPORTED. */
  readonly plantedSupported: number;
  /** Noise columns SUPPORTED, and noise columns tried, over all runs. */
  readonly noiseSupported: number;
  readonly noiseTried: number;
  /** Runs where at least one noise column was SUPPORTED. */
  readonly runsWithFalseSupport: number;
  readonly msPerRun: number;
}

/**
 * Runs `explore` once per seed on `syntheticLog({ ...log, seed })` and tallies verdicts.
 * Example: `await validity([1, 2, 3], { effect: 0 })` → `{ runs: 3, noiseSupported: 0, noiseTried: 39, … }`.
 */
export async function validity(
  seeds: readonly number[],
  log: Omit<SyntheticOptions, "seed"> = {},
  resamples = { explore: 50, sealed: 300 },
  calibrator?: Calibrator,
): Promise<ValidityTally> {
  let plantedSupported = 0,
    noiseSupported = 0,
    noiseTried = 0,
    runsWithFalseSupport = 0;
  const t0 = performance.now();
  for (const seed of seeds) {
    const truth = syntheticLog({ ...log, seed });
    const { cases } = importTable(truth.rows, { label: "passed", input: "prompt" });
    const { report } = await exploreCases(cases, { seed, resamples, ...(calibrator ? { calibrator } : {}) });
    const supported = new Set(report.hypotheses.filter((h) => h.verdict === "SUPPORTED").map((h) => h.signal));
    // A categorical noise column is tested as one signal per level: count the column once.
    const columnOf = (signal: string) => signal.split("=")[0]!;
    const supportedColumns = new Set([...supported].map(columnOf));
    if (truth.planted && supportedColumns.has(truth.planted)) plantedSupported++;
    const noise = truth.noise.filter((c) => supportedColumns.has(c)).length;
    noiseSupported += noise;
    noiseTried += truth.noise.length;
    if (noise) runsWithFalseSupport++;
  }
  return {
    runs: seeds.length,
    plantedSupported,
    noiseSupported,
    noiseTried,
    runsWithFalseSupport,
    msPerRun: (performance.now() - t0) / Math.max(1, seeds.length),
  };
}
