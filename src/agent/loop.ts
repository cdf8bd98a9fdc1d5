/**
 * M2–M4 over a table of per-case signals: split into exploration and sealed
 * cases, explore, state and freeze hypotheses, then open the sealed split once
 * to decide them. Used as is by `evalrx explore` (eval logs, no model) and by
 * `investigate` after M1 has turned a model's internals into signals.
 */
import { holdout } from "../datasets/select.ts";
import type { FailureCase } from "../core/index.ts";
import { diagnose, type Hypothesis } from "./diagnose.ts";
import type { Calibrator } from "./evalue.ts";
import type { EventLog, Stage } from "./events.ts";
import { explore, type ScreenRule, type SignalFinding } from "./explore.ts";
import { compareLayers } from "./layers.ts";
import type { FailureModeOptions } from "./modes/failure-modes.ts";
import { findLoopModes, modeHypotheses, placeSealed, type LoopModes } from "./modes/mode-loop.ts";
import type { Judge } from "./judge.ts";
import type { ExperimentProtocol } from "./protocol.ts";
import { signalValues } from "./same-measurement.ts";
import { SealedSplit } from "./sealed.ts";
import { selectRows, typeSignals, type CaseTable } from "./signals.ts";
import { verify, type VerifiedHypothesis } from "./verify.ts";

export interface LoopOptions {
  readonly protocol: ExperimentProtocol;
  /** Share of cases (clusters) sealed for M4; default 0.4. */
  readonly holdout?: number;
  /** Seal whole clusters (default when the table has clusters) or single cases. */
  readonly holdoutBy?: "cluster" | "id";
  /** The seed salts the holdout hash and seeds every bootstrap. */
  readonly seed?: number;
  /** Level of M4's e-BH over the frozen hypotheses (and M5's budget); default 0.05. */
  readonly alpha?: number;
  /** M2's screen: which exploration signals become hypotheses (default p ≤ 0.05, at most 5). */
  readonly screen?: Partial<ScreenRule>;
  readonly judge?: Judge;
  /** Bootstrap resamples for M2 figures (default 400) and M4 intervals (default 2000). */
  readonly resamples?: { readonly explore?: number; readonly sealed?: number };
  /** How p-values become e-values (default: the mixture calibrator). */
  readonly calibrator?: Calibrator;
  /**
   * Share of the sealed split (by cluster when clustered) kept apart for M5, so repairs are validated on
   * cases M4 did not use; 0 (default) lets M5 reuse M4's sealed cases, which the report then says.
   */
  readonly repairHoldout?: number;
  /**
   * Cluster the exploration failures into modes after M2 (`modes.found`) and state each mode as a candidate
   * hypothesis for M3, placed on the sealed cases by the rule fixed on exploration; off unless given.
   */
  readonly modes?: boolean | FailureModeOptions;
  /** Reorders M3's hypotheses before they are numbered (earlier runs' lessons); never which, nor how they are tested. */
  readonly reorder?: (findings: readonly SignalFinding[]) => SignalFinding[];
}

export interface LoopResult {
  readonly findings: SignalFinding[];
  readonly hypotheses: Hypothesis[];
  readonly verified: VerifiedHypothesis[];
  readonly explore: CaseTable;
  /** The guard around the sealed split (opened by M4 when there was something to decide). */
  readonly sealed: SealedSplit;
  /** The repair split M5 validates on, when `repairHoldout` > 0 (sealed like the sealed split). */
  readonly repair?: SealedSplit;
  /** The exploration split's failure modes (and their fixed rule), when `modes` was asked for and some exploration case failed. */
  readonly modes?: LoopModes;
}

/**
 * Splits `table` into exploration and sealed cases without reading any signal
 * or label: only ids and clusters decide (the datasets' stable `holdout`, salted by the seed).
 */
export function splitTable(
  table: CaseTable,
  fraction: number,
  by: "cluster" | "id",
  seed: number,
): { explore: number[]; sealed: number[]; salt: string } {
  const salt = `evalrx-holdout-${seed}`;
  const pseudo: (FailureCase & { index: number })[] = table.ids.map((id, index) => ({
    id,
    index,
    input: { prompt: "" },
    tags: [],
    status: "active",
    meta: {},
    cluster: table.clusters?.[index],
  }));
  const split = holdout(pseudo, fraction, { by, salt });
  return { explore: split.explore.map((c) => c.index), sealed: split.sealed.map((c) => c.index), salt };
}

/**
 * Runs one stage between `stage.started` and `stage.finished` (with its wall time in ms): the report's per-stage timing.
 * Example: `await timed(log, "M2", () => explore(…))` logs `{ stage: "M2", ms: 812 }` when it returns.
 */
export async function timed<T>(
  log: EventLog,
  stage: Exclude<Stage, "setup" | "report">,
  fn: () => T | Promise<T>,
): Promise<T> {
  log.append(stage, "stage.started", { stage });
  const t0 = performance.now();
  const out = await fn();
  log.append(stage, "stage.finished", { stage, ms: Math.round(performance.now() - t0) });
  return out;
}

/**
 * Runs M2 → M3 → M4 on `table` and logs every step.
 *
 * Example: `await runLoop(table, log, { protocol: { question: "What predicts failure?" }, seed: 1 })`
 * → `{ hypotheses: [...], verified: [{ id: "H1", verdict: "SUPPORTED", … }] }`.
 */
export async function runLoop(table: CaseTable, log: EventLog, options: LoopOptions): Promise<LoopResult> {
  const fraction = options.holdout ?? 0.4;
  if (!(fraction > 0 && fraction < 1))
    throw new Error(`holdout ${fraction} must lie strictly between 0 and 1 (e.g. 0.4 seals 40% of the cases)`);
  const seed = options.seed ?? 1;
  const alpha = options.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) throw new Error(`alpha ${alpha} must lie strictly between 0 and 1 (e.g. 0.05)`);
  const by = options.holdoutBy ?? (table.clusters ? "cluster" : "id");
  const split = splitTable(table, fraction, by, seed);
  const exploreTable = selectRows(table, split.explore);
  const repairShare = options.repairHoldout ?? 0;
  if (!(repairShare >= 0 && repairShare < 1))
    throw new Error(`repairHoldout ${repairShare} must lie in [0, 1) (e.g. 0.5 keeps half the sealed cases for M5)`);
  let sealedRows = split.sealed;
  let repairRows: number[] | undefined;
  if (repairShare > 0) {
    // The sealed rows split again by the same id/cluster hash under another salt: still no label or signal read.
    const inner = splitTable(selectRows(table, split.sealed), repairShare, by, seed + 7919);
    repairRows = inner.sealed.map((k) => split.sealed[k]!);
    sealedRows = inner.explore.map((k) => split.sealed[k]!);
  }
  // Only the row numbers go into the guard: the sealed signals and labels are not even copied until M4 opens it.
  const sealed = new SealedSplit(table, sealedRows, log);
  const repair = repairRows ? new SealedSplit(table, repairRows, log) : undefined;
  const exploreFailures = exploreTable.failed.filter(Boolean).length;
  log.append("setup", "split.made", {
    fraction,
    by,
    salt: split.salt,
    explore: { n: exploreTable.ids.length, failures: exploreFailures },
    sealed: { n: sealed.n },
    ...(repair ? { repair: { n: repair.n, fraction: repairShare } } : {}),
    clusters: table.clusters ? new Set(table.clusters).size : undefined,
  });

  let found: LoopModes | undefined;
  const findings = await timed(log, "M2", () => {
    const typed = typeSignals(exploreTable);
    const problems = [...typed.untestable];
    if (exploreFailures === 0 || exploreFailures === exploreTable.ids.length) {
      const why =
        exploreFailures === 0
          ? "no exploration case fails: there is no failure to explain"
          : "every exploration case fails: nothing distinguishes failures from passes";
      log.append("M2", "problem", { what: "label", why });
      return explore(
        exploreTable,
        [],
        [...problems, ...typed.signals.map((s) => ({ name: s.name, reason: why }))],
        log,
        {
          alpha,
          seed,
          resamples: options.resamples?.explore,
          ...(options.screen ? { screen: options.screen } : {}),
        },
      );
    }
    const findings = explore(exploreTable, typed.signals, problems, log, {
      alpha,
      seed,
      resamples: options.resamples?.explore,
      ...(options.calibrator ? { calibrator: options.calibrator } : {}),
      ...(options.screen ? { screen: options.screen } : {}),
    });
    compareLayers(typed.signals, exploreTable.failed, log);
    if (options.modes) {
      const modeOptions = options.modes === true ? {} : options.modes;
      found = findLoopModes(exploreTable, typed.signals, log, {
        seed,
        ...modeOptions,
        ...(options.resamples?.explore ? { resamples: options.resamples.explore } : {}),
      });
    }
    return findings;
  });
  const hypotheses = await timed(log, "M3", () =>
    diagnose(findings, log, {
      judge: options.judge,
      values: signalValues(exploreTable),
      ...(found ? { candidates: modeHypotheses(found) } : {}),
      ...(options.reorder ? { reorder: options.reorder } : {}),
    }),
  );
  const verified = await timed(log, "M4", async () => {
    if (hypotheses.length === 0) {
      log.append("M4", "problem", {
        what: "hypotheses",
        why: "no signal passed the screen on the exploration split, so nothing was decided on the sealed split (it stays unread)",
      });
      return [];
    }
    // The sealed cases get their mode only now, by the rule fixed on the exploration split.
    const opened = sealed.open("M4");
    return verify(hypotheses, found ? placeSealed(opened, found, log) : opened, log, {
      alpha,
      seed,
      protocol: options.protocol,
      judge: options.judge,
      resamples: options.resamples?.sealed,
      ...(options.calibrator ? { calibrator: options.calibrator } : {}),
    });
  });
  return {
    findings,
    hypotheses,
    verified,
    explore: found?.explore ?? exploreTable,
    sealed,
    ...(repair ? { repair } : {}),
    ...(found ? { modes: found } : {}),
  };
}
