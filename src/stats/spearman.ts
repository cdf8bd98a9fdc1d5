import { tCdf } from "./distributions.ts";
import { rankAverage } from "./rank.ts";
import { numbers, sameLength } from "./validate.ts";

/**
 * Does a signal rise or fall monotonically with a score? Spearman's rank correlation
 * (average ranks for ties) and its two-sided p-value from the t distribution with
 * n − 2 degrees of freedom (as `scipy.stats.spearmanr`). Needs n ≥ 3 and neither
 * variable constant (the correlation is undefined then: it throws).
 *
 * @example spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) // { rho: 0.8208, p: 0.0886 }
 */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): { rho: number; p: number } {
  const fn = "spearman";
  const a = numbers(fn, "x", x, 3);
  const b = numbers(fn, "y", y, 3);
  sameLength(fn, "x", a.length, "y", b.length);
  const n = a.length;
  const ra = rankAverage(a).ranks;
  const rb = rankAverage(b).ranks;
  const mean = (n + 1) / 2; // average ranks always sum to n(n+1)/2
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = ra[i]! - mean;
    const db = rb[i]! - mean;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  if (saa === 0) throw new RangeError(`${fn}(): x is constant, so the rank correlation is undefined`);
  if (sbb === 0) throw new RangeError(`${fn}(): y is constant, so the rank correlation is undefined`);
  const rho = Math.max(-1, Math.min(1, sab / Math.sqrt(saa * sbb)));
  const df = n - 2;
  if (Math.abs(rho) === 1) return { rho, p: 0 };
  const t = rho * Math.sqrt(df / ((rho + 1) * (1 - rho)));
  return { rho, p: Math.min(1, 2 * tCdf(-Math.abs(t), df)) };
}
