/**
 * What any search over a log's columns could confirm, as a yardstick for the
 * loop's power: the full-sample max-T test (Westfall–Young single step). It
 * looks at every case once, with no exploration/sealed split, and controls the
 * family-wise error over the columns by comparing each column's statistic with
 * the permutation distribution of the largest statistic over all of them. A
 * procedure that treats the columns alike and controls that error cannot
 * reliably beat it; only knowing the column in advance can (then the family is
 * one column).
 *
 * For cases that are independent (no clusters): it permutes the failure labels
 * over cases.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { chiSquareSf, normalQuantile } from "../../stats/distributions.ts";
import { rankAverage } from "../../stats/rank.ts";
import { seededRng } from "../../stats/rng.ts";

export interface MaxTOptions {
  /** Label permutations (default 499). */
  readonly permutations?: number;
  /** Family-wise error rate (default 0.05). */
  readonly alpha?: number;
  readonly seed?: number;
}

export interface MaxTResult {
  /** Each column's |z| on the observed labels (categorical: the χ² p-value as a two-sided z). */
  readonly z: ReadonlyMap<string, number>;
  /** Each column's sign: + when failure rises with the value (true, larger); 0 for categorical. */
  readonly sign: ReadonlyMap<string, number>;
  /** Each column's adjusted p-value: P(max over columns of |z| under permuted labels ≥ its |z|). */
  readonly adjustedP: ReadonlyMap<string, number>;
  /** Columns whose adjusted p ≤ α. */
  readonly rejected: readonly string[];
}

type Row = Readonly<Record<string, string | number | boolean>>;

/** A column as the statistic needs it: centred ranks (ordered values) or level indices (categories). */
type Prepared =
  | { readonly kind: "ordered"; readonly centred: Float64Array; readonly scale: number }
  | { readonly kind: "categorical"; readonly level: Uint32Array; readonly sizes: Float64Array };

function prepare(rows: readonly Row[], column: string): Prepared | null {
  const values = rows.map((r, i) => {
    const v = r[column];
    if (v === undefined) throw new Error(`maxTBound: row ${i} has no column '${column}'`);
    return v;
  });
  if (values.every((v) => typeof v === "string")) {
    const levels = new Map<string, number>();
    const level = Uint32Array.from(values as string[], (v) => {
      if (!levels.has(v)) levels.set(v, levels.size);
      return levels.get(v)!;
    });
    if (levels.size < 2) return null;
    const sizes = new Float64Array(levels.size);
    for (const l of level) sizes[l]!++;
    return { kind: "categorical", level, sizes };
  }
  const numeric = values.map((v, i) => {
    if (typeof v === "boolean") return v ? 1 : 0;
    if (typeof v === "number" && Number.isFinite(v)) return v;
    throw new Error(
      `maxTBound: column '${column}' mixes kinds: row ${i} has ${JSON.stringify(v)} where a number or boolean was expected`,
    );
  });
  const { ranks } = rankAverage(numeric);
  const mean = ranks.reduce((s, x) => s + x, 0) / ranks.length;
  const centred = ranks.map((x) => x - mean);
  const ss = centred.reduce((s, x) => s + x * x, 0);
  if (ss === 0) return null;
  return { kind: "ordered", centred, scale: 1 / Math.sqrt(ss) };
}

/** A column's signed z for failure labels `f` (0/1) with `fails` failures among n. */
function statistic(c: Prepared, f: Uint8Array, fails: number): number {
  const n = f.length;
  const p = fails / n;
  if (c.kind === "ordered") {
    let dot = 0;
    for (let i = 0; i < n; i++) if (f[i]) dot += c.centred[i]!;
    // Pearson r of the ranks with the labels, times √(n − 1): ≈ N(0, 1) under the null.
    return dot * c.scale * Math.sqrt((n - 1) / (fails * (1 - p)));
  }
  const failsIn = new Float64Array(c.sizes.length);
  for (let i = 0; i < n; i++) if (f[i]) failsIn[c.level[i]!]!++;
  let chi = 0;
  for (let l = 0; l < failsIn.length; l++) {
    const expected = c.sizes[l]! * p;
    chi += (failsIn[l]! - expected) ** 2 / (expected * (1 - p));
  }
  const pValue = chiSquareSf(chi, c.sizes.length - 1);
  return pValue >= 1 ? 0 : normalQuantile(1 - pValue / 2);
}

/**
 * Which columns the full-sample max-T test confirms, with each one's adjusted p-value.
 *
 * Example: on a 600-case log where `planted` adds 10 points of failure (30% → 40%, half the
 * cases) beside 12 noise columns, `maxTBound(rows, (r) => !r.passed, ["planted", ...noise])`
 * rejects `planted` in about 4 of 10 seeds: a 10-point factor among 13 columns is 2.6
 * standard errors, under the max of 13 null |z| (≈ 2.7 at 5%).
 */
export function maxTBound(
  rows: readonly Row[],
  failed: (row: Row) => boolean,
  columns: readonly string[],
  { permutations = 499, alpha = 0.05, seed = 1 }: MaxTOptions = {},
): MaxTResult {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`maxTBound: alpha must be in (0, 1), got ${alpha}`);
  if (!Number.isInteger(permutations) || permutations < 19)
    throw new RangeError(`maxTBound: permutations must be a whole number ≥ 19, got ${permutations}`);
  if (rows.length < 4) throw new RangeError(`maxTBound: needs at least 4 cases, got ${rows.length}`);
  const labels = Uint8Array.from(rows, (r) => (failed(r) ? 1 : 0));
  const fails = labels.reduce((s, x) => s + x, 0);
  const prepared = new Map<string, Prepared>();
  for (const column of columns) {
    const c = prepare(rows, column);
    if (c) prepared.set(column, c);
  }
  const z = new Map<string, number>();
  const sign = new Map<string, number>();
  const exceed = new Map<string, number>();
  for (const [column, c] of prepared) {
    const s = fails === 0 || fails === rows.length ? 0 : statistic(c, labels, fails);
    z.set(column, Math.abs(s));
    sign.set(column, c.kind === "ordered" ? Math.sign(s) : 0);
    exceed.set(column, 0);
  }
  const rng = seededRng("maxTBound", seed);
  const f = labels.slice();
  for (let b = 0; b < permutations && fails > 0 && fails < rows.length; b++) {
    for (let i = f.length - 1; i > 0; i--) {
      const j = Math.floor(uniformFloat64(rng) * (i + 1));
      const t = f[i]!;
      f[i] = f[j]!;
      f[j] = t;
    }
    let max = 0;
    for (const c of prepared.values()) max = Math.max(max, Math.abs(statistic(c, f, fails)));
    for (const [column, observed] of z) if (max >= observed) exceed.set(column, exceed.get(column)! + 1);
  }
  const adjustedP = new Map<string, number>();
  // With one label only there is nothing to test: every column's p is 1.
  const constant = fails === 0 || fails === rows.length;
  for (const column of z.keys()) adjustedP.set(column, constant ? 1 : (1 + exceed.get(column)!) / (1 + permutations));
  const rejected = [...adjustedP].filter(([, p]) => p <= alpha).map(([column]) => column);
  return { z, sign, adjustedP, rejected };
}
