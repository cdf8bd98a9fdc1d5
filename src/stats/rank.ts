/**
 * Ranks 1…n with ties given their average rank, the convention of
 * `scipy.stats.rankdata(method="average")`, plus the tie term Σ(t³ − t) over
 * tie groups that rank tests need for their variance.
 */
export function rankAverage(values: ArrayLike<number>): { ranks: Float64Array; tieTerm: number } {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((i, j) => values[i]! - values[j]!);
  const ranks = new Float64Array(n);
  let tieTerm = 0;
  let i = 0;
  while (i < n) {
    let j = i + 1;
    while (j < n && values[order[j]!] === values[order[i]!]) j++;
    // positions i…j−1 (0-based) hold ranks i+1…j; their average is (i + 1 + j) / 2
    const avg = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) ranks[order[k]!] = avg;
    const t = j - i;
    tieTerm += t * t * t - t;
    i = j;
  }
  return { ranks, tieTerm };
}
