/**
 * Effect sizes of a signal on failure, and their cluster-bootstrap intervals.
 * One effect per signal kind, each with a null value and a sign that says the
 * direction: risk difference (binary), AUC (numeric), Spearman ρ (ordinal).
 */
import { expandedTail } from "../stats/paired-bootstrap.ts";
import { rankAverage } from "../stats/rank.ts";
import { drawIndex, rejectBelow, seededRng } from "../stats/rng.ts";
import type { SignalKind } from "./signals.ts";

/** The effect measure used for a kind of signal, and its value under no association. */
export const EFFECTS: Record<
  SignalKind,
  { readonly name: string; readonly nullValue: number; readonly describe: string }
> = {
  binary: {
    name: "risk difference",
    nullValue: 0,
    describe: "P(fail | signal) − P(fail | no signal)",
  },
  numeric: {
    name: "AUC",
    nullValue: 0.5,
    describe: "P(a failing case's value > a passing case's value), ties ½",
  },
  ordinal: {
    name: "Spearman ρ",
    nullValue: 0,
    describe: "rank correlation of the signal with failure (1 = fail)",
  },
};

/** Risk difference P(fail | x = 1) − P(fail | x = 0) over the rows `rows`; NaN when a group is empty. */
export function riskDifference(x: ArrayLike<number>, failed: readonly boolean[], rows: readonly number[]): number {
  let n1 = 0,
    f1 = 0,
    n0 = 0,
    f0 = 0;
  for (const i of rows) {
    if (x[i] === 1) {
      n1++;
      if (failed[i]) f1++;
    } else {
      n0++;
      if (failed[i]) f0++;
    }
  }
  return n1 && n0 ? f1 / n1 - f0 / n0 : NaN;
}

/** AUC = P(X_fail > X_pass) + ½·P(tie) over the rows `rows`; NaN when a class is empty. */
export function auc(x: ArrayLike<number>, failed: readonly boolean[], rows: readonly number[]): number {
  const values = rows.map((i) => x[i]!);
  const r = rankAverage(values).ranks;
  let nf = 0,
    rankSum = 0;
  rows.forEach((i, k) => {
    if (failed[i]) {
      nf++;
      rankSum += r[k]!;
    }
  });
  const np = rows.length - nf;
  return nf && np ? (rankSum - (nf * (nf + 1)) / 2) / (nf * np) : NaN;
}

/** Spearman ρ between the signal and the failure indicator over the rows `rows`; NaN when either is constant. */
export function spearmanRho(x: ArrayLike<number>, failed: readonly boolean[], rows: readonly number[]): number {
  const rx = rankAverage(rows.map((i) => x[i]!)).ranks;
  const ry = rankAverage(rows.map((i) => (failed[i] ? 1 : 0))).ranks;
  const n = rows.length;
  const mean = (n + 1) / 2;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let k = 0; k < n; k++) {
    const a = rx[k]! - mean,
      b = ry[k]! - mean;
    sxy += a * b;
    sxx += a * a;
    syy += b * b;
  }
  return sxx && syy ? sxy / Math.sqrt(sxx * syy) : NaN;
}

/** The effect of a signal of `kind` on failure over `rows`. */
export function effectOf(
  kind: SignalKind,
  x: ArrayLike<number>,
  failed: readonly boolean[],
  rows: readonly number[],
): number {
  return kind === "binary"
    ? riskDifference(x, failed, rows)
    : kind === "numeric"
      ? auc(x, failed, rows)
      : spearmanRho(x, failed, rows);
}

/**
 * The rank effect (AUC or Spearman ρ) of resamples of `rows`, from counts per distinct value:
 * the values never change between resamples, only how often each row is drawn, so one sort up
 * front replaces a sort per resample (`auc` and `spearmanRho` give the same numbers, O(n log n)
 * each; this is O(n + distinct values) per resample).
 */
export function countingEffect(
  kind: "numeric" | "ordinal",
  x: ArrayLike<number>,
  rows: readonly number[],
): (failed: readonly boolean[], sample: readonly number[]) => number {
  const distinct = [...new Set(rows.map((i) => x[i]!))].sort((a, b) => a - b);
  const at = new Map(distinct.map((v, k) => [v, k]));
  const level = new Int32Array(x.length);
  for (const i of rows) level[i] = at.get(x[i]!)!;
  const d = distinct.length;
  const fail = new Float64Array(d);
  const pass = new Float64Array(d);
  return (failed, sample) => {
    fail.fill(0);
    pass.fill(0);
    for (const i of sample) (failed[i] ? fail : pass)[level[i]!]!++;
    let nf = 0;
    for (let v = 0; v < d; v++) nf += fail[v]!;
    const n = sample.length;
    const np = n - nf;
    if (!nf || !np) return NaN;
    if (kind === "numeric") {
      // AUC = Σ_v fail_v · (passes below v + ½ passes at v) / (nf·np)
      let below = 0;
      let s = 0;
      for (let v = 0; v < d; v++) {
        s += fail[v]! * (below + 0.5 * pass[v]!);
        below += pass[v]!;
      }
      return s / (nf * np);
    }
    // Spearman ρ of the value's mid-rank with the failure indicator's mid-rank (failures rank above passes).
    const mean = (n + 1) / 2;
    const ry = { pass: (np + 1) / 2 - mean, fail: np + (nf + 1) / 2 - mean };
    let cum = 0;
    let sxy = 0;
    let sxx = 0;
    for (let v = 0; v < d; v++) {
      const c = fail[v]! + pass[v]!;
      if (!c) continue;
      const rx = cum + (c + 1) / 2 - mean;
      cum += c;
      sxy += rx * (fail[v]! * ry.fail + pass[v]! * ry.pass);
      sxx += c * rx * rx;
    }
    const syy = nf * ry.fail * ry.fail + np * ry.pass * ry.pass;
    return sxx && syy ? sxy / Math.sqrt(sxx * syy) : NaN;
  };
}

export interface Interval {
  readonly lo: number;
  readonly hi: number;
  readonly level: number;
  /** How it was computed, e.g. "cluster bootstrap (percentile, 1000 resamples over 80 clusters)". */
  readonly method: string;
}

/** Below this many clusters an effect's cluster-bootstrap interval says it is approximate. */
const FEW_CLUSTERS = 20;

/**
 * How uncertain is this effect? A percentile bootstrap that resamples whole
 * clusters (or cases, without clusters) with replacement, so correlated cases
 * stay together and the interval is not too narrow; resamples where the effect
 * is undefined (one class missing) are skipped. The ends are read at Hesterberg's
 * expanded-percentile levels for the number of units resampled (as `pairedBootstrap`
 * does), which keeps small samples from getting too-narrow intervals; under 20
 * clusters the method says the interval is approximate. Seeded through the
 * project's `seededRng` (with its jump): same seed, same interval.
 *
 * Example: `bootstrapEffect("numeric", x, failed, rows, undefined, { seed: 1 })`
 * → `{ lo: 0.61, hi: 0.78, level: 0.95, method: "case bootstrap …" }` for a real effect.
 */
export function bootstrapEffect(
  kind: SignalKind,
  x: ArrayLike<number>,
  failed: readonly boolean[],
  rows: readonly number[],
  clusters: readonly string[] | undefined,
  options: { readonly seed?: number; readonly resamples?: number; readonly level?: number } = {},
): Interval {
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  const rng = seededRng("bootstrapEffect", options.seed ?? 1);
  const units = new Map<string, number[]>();
  for (const i of rows) {
    const key = clusters ? `c:${clusters[i]}` : `i:${i}`;
    const unit = units.get(key);
    if (unit) unit.push(i);
    else units.set(key, [i]);
  }
  const groups = [...units.values()];
  const stats: number[] = [];
  const threshold = rejectBelow(Math.max(1, groups.length));
  const counted = kind === "binary" ? undefined : countingEffect(kind, x, rows);
  for (let b = 0; b < resamples; b++) {
    const sample: number[] = [];
    for (let g = 0; g < groups.length; g++) {
      for (const i of groups[drawIndex(rng, groups.length, threshold)]!) sample.push(i);
    }
    const value = counted ? counted(failed, sample) : effectOf(kind, x, failed, sample);
    if (!Number.isNaN(value)) stats.push(value);
  }
  const what = clusters ? `${groups.length} clusters` : `${groups.length} cases`;
  const few = clusters && groups.length < FEW_CLUSTERS ? "; few clusters: approximate" : "";
  const method = `${clusters ? "cluster" : "case"} bootstrap (expanded percentile, ${resamples} resamples over ${what}${few})`;
  if (stats.length < resamples / 2) return { lo: NaN, hi: NaN, level, method: `${method}: too few valid resamples` };
  stats.sort((a, b) => a - b);
  const q = (p: number) => {
    const h = (stats.length - 1) * p;
    const i = Math.floor(h);
    return i + 1 < stats.length ? stats[i]! + (h - i) * (stats[i + 1]! - stats[i]!) : stats[i]!;
  };
  const tail = expandedTail(level, groups.length);
  return { lo: q(tail), hi: q(1 - tail), level, method };
}
