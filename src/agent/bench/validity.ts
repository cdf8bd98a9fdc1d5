/**
 * The validity study behind the tests and `bench:validity`: run `explore` on
 * seeded synthetic eval logs with known truth and count how often a planted
 * signal is SUPPORTED, how often a pure-noise column is, and what M2's
 * e-values and p-values do on the noise columns.
 */
import { importTable } from "../../datasets/index.ts";
import { associate } from "../association.ts";
import type { Calibrator } from "../evalue.ts";
import { codeValues } from "../signals.ts";
import type { ScreenRule } from "../explore.ts";
import { exploreCases } from "../run-explore.ts";
import { syntheticLog, type SyntheticOptions } from "./synthetic.ts";

export interface ValidityTally {
  readonly runs: number;
  /** Runs where the planted signal was SUPPORTED. */
  readonly plantedSupported: number;
  /** Runs where the planted signal passed M2's screen. */
  readonly plantedSelected: number;
  /** Noise columns SUPPORTED, and noise columns tried, over all runs. */
  readonly noiseSupported: number;
  readonly noiseTried: number;
  /** Runs where at least one noise column was SUPPORTED. */
  readonly runsWithFalseSupport: number;
  /** M2 on the noise signals (each categorical level counts): how many were tested, their e-values' sum, p ≤ 0.05. */
  readonly noiseSignals: number;
  readonly noiseESum: number;
  readonly noiseP05: number;
  /** Runs in which M2's screen let a noise signal through (selection only: M4 still decides). */
  readonly runsWithNoiseSelected: number;
  /**
   * Runs where the planted signal, tested alone on the sealed split with M4's test one-sided in its true
   * direction at α = 0.05 (no screen, no family), rejects: the ceiling of any screen-then-confirm design
   * on this split, whatever the screen and the family's α sharing.
   */
  readonly plantedSealedAlone: number;
  readonly msPerRun: number;
}

/** A share with its Monte Carlo standard error, e.g. "0.046 ± 0.015". */
export function share(k: number, n: number, digits = 3): string {
  if (n === 0) return "—";
  const p = k / n;
  return `${p.toFixed(digits)} ± ${Math.sqrt((p * (1 - p)) / n).toFixed(digits)}`;
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
  { screen, holdout }: { readonly screen?: Partial<ScreenRule>; readonly holdout?: number } = {},
): Promise<ValidityTally> {
  let plantedSupported = 0,
    plantedSelected = 0,
    noiseSupported = 0,
    noiseTried = 0,
    runsWithFalseSupport = 0,
    noiseSignals = 0,
    noiseESum = 0,
    noiseP05 = 0,
    runsWithNoiseSelected = 0,
    plantedSealedAlone = 0;
  const t0 = performance.now();
  for (const seed of seeds) {
    const truth = syntheticLog({ ...log, seed });
    const { cases } = importTable(truth.rows, { label: "passed", input: "prompt" });
    const { report, result } = await exploreCases(cases, {
      seed,
      resamples,
      ...(calibrator ? { calibrator } : {}),
      ...(screen ? { screen } : {}),
      ...(holdout ? { holdout } : {}),
    });
    if (truth.planted && result.sealed.opened) {
      const sealed = result.sealed.open("M4");
      const kind = typeof truth.rows[0]![truth.planted] === "boolean" ? "binary" : "numeric";
      const a = associate(
        kind,
        codeValues(sealed.columns.get(truth.planted)!, kind, "true"),
        sealed.failed,
        sealed.ids.map((_, i) => i),
        {
          alternative: 1,
          seed,
          resamples: 20,
          permutations: 4999,
          ...(sealed.clusters ? { clusters: sealed.clusters } : {}),
        },
      );
      if (a.p <= 0.05) plantedSealedAlone++;
    }
    // A categorical noise column is tested as one signal per level: count the column once.
    const columnOf = (signal: string) => signal.split("=")[0]!;
    const supported = new Set(
      report.hypotheses.filter((h) => h.verdict === "SUPPORTED").map((h) => columnOf(h.signal)),
    );
    if (truth.planted && supported.has(truth.planted)) plantedSupported++;
    if (truth.planted && report.signals.selected.some((s) => columnOf(s) === truth.planted)) plantedSelected++;
    const noise = truth.noise.filter((c) => supported.has(c)).length;
    noiseSupported += noise;
    noiseTried += truth.noise.length;
    if (noise) runsWithFalseSupport++;
    const noiseColumns = new Set(truth.noise);
    let selectedNoise = false;
    for (const s of report.signals.tested) {
      if (!noiseColumns.has(columnOf(s.signal)) || s.untestable) continue;
      noiseSignals++;
      noiseESum += s.e ?? 0;
      if ((s.p ?? 1) <= 0.05) noiseP05++;
      if (s.selected) selectedNoise = true;
    }
    if (selectedNoise) runsWithNoiseSelected++;
  }
  return {
    runs: seeds.length,
    plantedSupported,
    plantedSelected,
    noiseSupported,
    noiseTried,
    runsWithFalseSupport,
    noiseSignals,
    noiseESum,
    noiseP05,
    runsWithNoiseSelected,
    plantedSealedAlone,
    msPerRun: (performance.now() - t0) / Math.max(1, seeds.length),
  };
}
