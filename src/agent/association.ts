/**
 * The association test a signal gets, by kind and by the unit of inference.
 * Independent cases: Fisher's exact test on the 2×2 table (binary), Mann–Whitney
 * U (numeric), Spearman's rank correlation (ordinal). Cases in clusters (several
 * questions on one image, several repeats of one case): a cluster permutation test
 * of the same association (binary codes or ranks against failure), which permutes
 * whole clusters and so holds its level whatever the within-cluster correlation.
 * Each gives a p-value, the effect with its direction, and a cluster-bootstrap interval;
 * the e-value is made from the p-value by the caller's calibrator.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { clusterAssociation, fisherExact, mannWhitneyU, spearman } from "../stats/index.ts";
import { rankAverage } from "../stats/rank.ts";
import { seededRng } from "../stats/rng.ts";
import { EFFECTS, bootstrapEffect, effectOf, type Interval } from "./effects.ts";
import { CALIBRATORS, type Calibrator } from "./evalue.ts";
import type { SignalKind } from "./signals.ts";

/** +1: failure goes with more of the signal (higher value / signal present); −1: with less. */
export type Direction = 1 | -1;

/** The tests an association may be decided by. */
export type AssociationTest = "fisherExact" | "mannWhitneyU" | "spearman" | "clusterPermutation";

export interface Association {
  readonly test: AssociationTest;
  /** The unit of inference: independent cases, or whole clusters. */
  readonly unit: "case" | "cluster";
  /** One line naming the test, its sidedness and the unit, as the report states it. */
  readonly testDescription: string;
  /** Cases with a value for the signal. */
  readonly n: number;
  /** Clusters among those cases (unit "cluster"). */
  readonly clusters?: number;
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
  /** Cluster permutations (default 999; M4 uses more, for a finer p-value). */
  readonly permutations?: number;
  /** How p becomes e (default: the mixture calibrator). */
  readonly calibrator?: Calibrator;
}

const CLASSIC: Record<SignalKind, AssociationTest> = {
  binary: "fisherExact",
  numeric: "mannWhitneyU",
  ordinal: "spearman",
};

const NAMES: Record<AssociationTest, string> = {
  fisherExact: "Fisher's exact test",
  mannWhitneyU: "Mann–Whitney U (normal approximation, continuity-corrected)",
  spearman: "Spearman's rank correlation (t approximation)",
  clusterPermutation: "cluster permutation test of the studentized score statistic",
};

/** True when some cluster holds more than one of these rows. */
function clustered(clusters: readonly string[] | undefined, rows: readonly number[]): boolean {
  if (!clusters) return false;
  const seen = new Set<string>();
  for (const i of rows) {
    const c = clusters[i]!;
    if (seen.has(c)) return true;
    seen.add(c);
  }
  return false;
}

/**
 * Is this signal associated with failure over these rows, and how strongly?
 *
 * Independent cases (no cluster holds two of the rows): the classic test of the kind. With
 * `alternative`, the p-value is one-sided in that direction: Fisher's one-sided exact p randomized
 * at the observed table (exactly uniform under the null, so M4's level γ is spent in full rather
 * than the conservative exact test's smaller share), and half the two-sided p of the (symmetric) normal/t approximations of Mann–Whitney
 * and Spearman when the effect points that way, 1 − p/2 when not.
 *
 * Clustered rows: `clusterAssociation` on the binary codes (binary) or mid-ranks (numeric,
 * ordinal) against the failure indicator, one- or two-sided, `permutations` whole-cluster
 * permutations; the unit of inference is the cluster.
 *
 * Example: `associate("numeric", x, failed, [0, 1, …])` →
 * `{ test: "mannWhitneyU", unit: "case", p: 0.0003, e: 54, effect: { name: "AUC", value: 0.71, … }, observedDirection: 1 }`.
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
  const byCluster = clustered(options.clusters, rows);
  const test: AssociationTest = byCluster ? "clusterPermutation" : CLASSIC[kind];
  const sided = options.alternative ? "one-sided" : "two-sided";
  const groups = byCluster ? new Set(rows.map((i) => options.clusters![i]!)).size : undefined;
  const permutations = options.permutations ?? 999;
  const scores = kind === "binary" ? "binary codes" : "mid-ranks";
  // One-sided Fisher (M4's frozen direction) is randomized at the observed table: exact size, no conservatism.
  const randomized = !byCluster && kind === "binary" && options.alternative !== undefined;
  const testDescription = byCluster
    ? `${NAMES[test]} (${scores} vs failure, ${permutations} permutations of whole clusters), ${sided}; unit: cluster (${groups} clusters)`
    : randomized
      ? `${NAMES[test]}, ${sided}, randomized at the observed table (Tocher's UMPU test: P(more extreme) + u·P(observed), u uniform from the run's seed); unit: case`
      : `${NAMES[test]}, ${sided}; unit: case`;
  const base = {
    test,
    unit: byCluster ? "cluster" : "case",
    testDescription,
    n: rows.length,
    ...(groups !== undefined ? { clusters: groups } : {}),
    failures,
    eMethod: calibrator.method,
    sided,
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
  let p: number;
  if (byCluster) {
    const raw = rows.map((i) => x[i]!);
    const s = kind === "binary" ? raw : Array.from(rankAverage(raw).ranks);
    p = clusterAssociation(
      s,
      rows.map((i) => (failed[i] ? 1 : 0)),
      rows.map((i) => options.clusters![i]!),
      {
        alternative: options.alternative === 1 ? "greater" : options.alternative === -1 ? "less" : "two-sided",
        permutations,
        seed: options.seed ?? 0,
      },
    ).p;
  } else if (kind === "binary") {
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
    const alt = options.alternative === 1 ? "greater" : options.alternative === -1 ? "less" : "two-sided";
    p = fisherExact(
      [
        [a, b],
        [c, d],
      ],
      alt,
      randomized ? { randomize: uniformFloat64(seededRng("associate", options.seed ?? 0)) } : undefined,
    ).p;
  } else {
    let pTwo: number;
    if (kind === "numeric") {
      const fail = rows.filter((i) => failed[i]).map((i) => x[i]!);
      const pass = rows.filter((i) => !failed[i]).map((i) => x[i]!);
      pTwo = mannWhitneyU(fail, pass).p;
    } else {
      pTwo = spearman(
        rows.map((i) => x[i]!),
        rows.map((i) => (failed[i] ? 1 : 0)),
      ).p;
    }
    p = pTwo;
    if (options.alternative) p = observedDirection === options.alternative ? pTwo / 2 : 1 - pTwo / 2;
  }
  const interval = bootstrapEffect(kind, x, failed, rows, byCluster ? options.clusters : undefined, {
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
