/**
 * The association test a signal gets, by kind: Fisher's exact test on the
 * 2×2 table (binary), Mann–Whitney U (numeric), Spearman's rank correlation
 * (ordinal). Each gives a p-value, the e-value calibrated from it, the effect
 * with its direction, and a cluster-bootstrap interval.
 */
import { fisherExact, mannWhitneyU, spearman } from "../stats/index.ts";
import { EFFECTS, bootstrapEffect, effectOf, type Interval } from "./effects.ts";
import { CALIBRATORS, type Calibrator } from "./evalue.ts";
import type { SignalKind } from "./signals.ts";

/** +1: failure goes with more of the signal (higher value / signal present); −1: with less. */
export type Direction = 1 | -1;

export interface Association {
  readonly test: "fisherExact" | "mannWhitneyU" | "spearman";
  /** Cases with a value for the signal. */
  readonly n: number;
  readonly failures: number;
  /** Two-sided, or one-sided in `alternative` when one was given. */
  readonly p: number;
  readonly sided: "two-sided" | "one-sided";
  readonly e: number;
  readonly eMethod: string;
  readonly effect: {
    readonly name: string;
    readonly value: number;
    readonly nullValue: number;
    readonly interval: Interval;
  };
  /** Which way the observed effect points (0 when exactly at the null). */
  readonly observedDirection: Direction | 0;
  /** Why the test could not run (e.g. every present case fails); the p-value is then 1. */
  readonly untestable?: string;
}

export interface AssociationOptions {
  /** Test one-sided in this direction (M4, where the direction was stated before). */
  readonly alternative?: Direction;
  readonly clusters?: readonly string[];
  readonly seed?: number;
  readonly resamples?: number;
  /** How p becomes e (default: the mixture calibrator). */
  readonly calibrator?: Calibrator;
}

/**
 * Is this signal associated with failure over these rows, and how strongly?
 *
 * With `alternative`, the p-value is one-sided in that direction: half the
 * two-sided p of the (symmetric) normal/t approximations of Mann–Whitney and
 * Spearman when the effect points that way, 1 − p/2 when not; for Fisher the
 * two-sided p itself, which is never below the one-sided p in the observed
 * direction (conservative), and 1 when the effect points the other way.
 *
 * Example: `associate("numeric", x, failed, [0, 1, …])` →
 * `{ test: "mannWhitneyU", p: 0.0003, e: 54, effect: { name: "AUC", value: 0.71, … }, observedDirection: 1 }`.
 */
export function associate(
  kind: SignalKind,
  x: ArrayLike<number>,
  failed: readonly boolean[],
  rowsIn: readonly number[],
  options: AssociationOptions = {},
): Association {
  const calibrator = options.calibrator ?? CALIBRATORS.mixture;
  const rows = rowsIn.filter((i) => !Number.isNaN(x[i]!));
  const failures = rows.filter((i) => failed[i]).length;
  const effectInfo = EFFECTS[kind];
  const test = kind === "binary" ? "fisherExact" : kind === "numeric" ? "mannWhitneyU" : "spearman";
  const base = {
    test,
    n: rows.length,
    failures,
    eMethod: calibrator.method,
    sided: options.alternative ? "one-sided" : "two-sided",
  } as const;
  const none = (why: string): Association => ({
    ...base,
    p: 1,
    e: calibrator.toE(1),
    effect: {
      name: effectInfo.name,
      value: NaN,
      nullValue: effectInfo.nullValue,
      interval: { lo: NaN, hi: NaN, level: 0.95, method: "none" },
    },
    observedDirection: 0,
    untestable: why,
  });
  if (rows.length < 4) return none(`only ${rows.length} cases have a value`);
  if (failures === 0) return none("no case with a value fails");
  if (failures === rows.length) return none("every case with a value fails");
  const distinct = new Set(rows.map((i) => x[i]!));
  if (distinct.size < 2) return none("the signal is constant on these cases");

  const value = effectOf(kind, x, failed, rows);
  const observedDirection: Direction | 0 = value > effectInfo.nullValue ? 1 : value < effectInfo.nullValue ? -1 : 0;
  let pTwo: number;
  if (kind === "binary") {
    let a = 0,
      b = 0,
      c = 0,
      d = 0;
    for (const i of rows) {
      if (x[i] === 1) {
        if (failed[i]) a++;
        else b++;
      } else if (failed[i]) c++;
      else d++;
    }
    pTwo = fisherExact([
      [a, b],
      [c, d],
    ]).p;
  } else if (kind === "numeric") {
    const fail = rows.filter((i) => failed[i]).map((i) => x[i]!);
    const pass = rows.filter((i) => !failed[i]).map((i) => x[i]!);
    pTwo = mannWhitneyU(fail, pass).p;
  } else {
    pTwo = spearman(
      rows.map((i) => x[i]!),
      rows.map((i) => (failed[i] ? 1 : 0)),
    ).p;
  }
  let p = pTwo;
  if (options.alternative) {
    const agrees = observedDirection === options.alternative;
    if (kind === "binary") p = agrees ? pTwo : 1;
    else p = agrees ? pTwo / 2 : 1 - pTwo / 2;
  }
  const interval = bootstrapEffect(kind, x, failed, rows, options.clusters, {
    seed: options.seed,
    resamples: options.resamples,
  });
  return {
    ...base,
    p,
    e: calibrator.toE(p),
    effect: { name: effectInfo.name, value, nullValue: effectInfo.nullValue, interval },
    observedDirection,
  };
}
