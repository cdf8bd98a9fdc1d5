import { chiSquareSf } from "./distributions.ts";
import { rankAverage } from "./rank.ts";
import { numbers } from "./validate.ts";

/**
 * Do k treatments (models, prompts, settings) rank differently across the same blocks
 * (cases)? Friedman's test on a matrix with one row per block and one column per
 * treatment: ranks within each row (average ties), chi-square statistic with the tie
 * correction, p from χ²(k − 1) (as `scipy.stats.friedmanchisquare`). Throws when every
 * row is entirely tied (no ranking information at all).
 *
 * @example friedman([[1, 2, 3], [2, 3, 1], [1, 3, 2], [1, 2, 3]]) // { statistic: 3.5, p: 0.1738 }
 */
export function friedman(matrix: readonly ArrayLike<number>[]): { statistic: number; p: number } {
  const fn = "friedman";
  if (!Array.isArray(matrix)) throw new TypeError(`${fn}(): matrix must be an array of rows (blocks)`);
  const n = matrix.length;
  if (n < 1) throw new RangeError(`${fn}(): matrix needs at least one row (block), got 0`);
  const first = numbers(fn, "matrix[0]", matrix[0], 2);
  const k = first.length;
  const rankSums = new Float64Array(k);
  let ties = 0;
  for (let i = 0; i < n; i++) {
    const row = i === 0 ? first : numbers(fn, `matrix[${i}]`, matrix[i], 2);
    if (row.length !== k) {
      throw new RangeError(`${fn}(): every row must have ${k} treatments like row 0, row ${i} has ${row.length}`);
    }
    const { ranks, tieTerm } = rankAverage(row);
    for (let j = 0; j < k; j++) rankSums[j]! += ranks[j]!;
    ties += tieTerm;
  }
  const c = 1 - ties / (k * (k * k - 1) * n);
  if (!(c > 0)) throw new RangeError(`${fn}(): every block ties all treatments, so there is nothing to rank`);
  let ssbn = 0;
  for (let j = 0; j < k; j++) ssbn += rankSums[j]! * rankSums[j]!;
  const statistic = Math.max(0, ((12 / (k * n * (k + 1))) * ssbn - 3 * n * (k + 1)) / c);
  return { statistic, p: chiSquareSf(statistic, k - 1) };
}
