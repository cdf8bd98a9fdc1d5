import { count, show } from "./validate.ts";

/** Relative tolerance for "as probable as the observed table" (R's and recent SciPy's 1 + 1e-7). */
const REL_TOL = 1e-7;

/**
 * Is a binary signal associated with failure? Fisher's exact test on the 2×2 table
 * [[a, b], [c, d]], two-sided: the probability, under independence with the margins
 * fixed, of every table no more probable than the observed one (within a relative
 * tolerance of 1e-7). `oddsRatio` is the sample odds ratio ad/(bc): Infinity when bc = 0
 * < ad, and null when a row or column is empty (the p-value is then 1).
 *
 * With `alternative` "greater" the p-value is one-sided, P(A ≥ a) (an odds ratio above 1:
 * the row-1 outcome-1 cell larger than chance), "less" P(A ≤ a) — what a test in a direction
 * stated beforehand uses (`scipy.stats.fisher_exact(alternative=…)`).
 *
 * With `randomize: u` (a uniform draw in [0, 1), one-sided only) the p-value is Tocher's randomized
 * one: P(A > a) + u·P(A = a) for "greater" (P(A < a) + u·P(A = a) for "less"). Under independence
 * it is exactly uniform, so a test at level γ rejects with probability exactly γ — the uniformly
 * most powerful unbiased test of the 2×2 table — where the plain exact p-value, which counts the whole
 * observed table, is conservative (its size sits below γ, the more so the smaller the table).
 * `pointProbability` is P(A = a), always returned.
 *
 * Probabilities are built by the ratio recurrence of the hypergeometric pmf outward
 * from the mode, so huge counts neither overflow nor lose relative accuracy.
 *
 * @example fisherExact([[8, 2], [1, 5]]) // { p: 0.03497, oddsRatio: 20 }; with "greater": { p: 0.02448, oddsRatio: 20 };
 *   with "greater", { randomize: 0.5 }: { p: 0.01267 } (P(A > 8) = 0.00087 plus half of P(A = 8) = 0.02360)
 */
export function fisherExact(
  table: readonly (readonly number[])[],
  alternative: "two-sided" | "greater" | "less" = "two-sided",
  opts?: { readonly randomize?: number },
): { p: number; oddsRatio: number | null; pointProbability: number } {
  const fn = "fisherExact";
  if (alternative !== "two-sided" && alternative !== "greater" && alternative !== "less")
    throw new RangeError(`${fn}(): alternative must be "two-sided", "greater" or "less", got ${show(alternative)}`);
  const u = opts?.randomize;
  if (u !== undefined) {
    if (alternative === "two-sided")
      throw new RangeError(`${fn}(): randomize needs a one-sided alternative ("greater" or "less"), got "two-sided"`);
    if (typeof u !== "number" || !(u >= 0 && u < 1))
      throw new RangeError(`${fn}(): randomize must be a uniform draw in [0, 1), got ${show(u)}`);
  }
  if (
    !Array.isArray(table) ||
    table.length !== 2 ||
    !Array.isArray(table[0]) ||
    !Array.isArray(table[1]) ||
    table[0].length !== 2 ||
    table[1].length !== 2
  ) {
    throw new TypeError(`${fn}(): table must be a 2×2 array [[a, b], [c, d]]`);
  }
  const a = count(fn, "table[0][0]", table[0][0]);
  const b = count(fn, "table[0][1]", table[0][1]);
  const c = count(fn, "table[1][0]", table[1][0]);
  const d = count(fn, "table[1][1]", table[1][1]);
  if (a + b === 0 || c + d === 0 || a + c === 0 || b + d === 0)
    return { p: u === undefined ? 1 : u, oddsRatio: null, pointProbability: 1 };
  const oddsRatio = b > 0 && c > 0 ? (a * d) / (b * c) : Infinity;

  // a ~ Hypergeometric: row 1 total r1, column 1 total c1, grand total N.
  const r1 = a + b;
  const c1 = a + c;
  const N = a + b + c + d;
  const lo = Math.max(0, c1 - (N - r1));
  const hi = Math.min(r1, c1);
  const mode = Math.floor(((c1 + 1) * (r1 + 1)) / (N + 2));
  // w[x − lo] = pmf(x) / pmf(mode); pmf(x+1)/pmf(x) = (r1 − x)(c1 − x) / ((x + 1)(N − r1 − c1 + x + 1)).
  const w = new Float64Array(hi - lo + 1);
  w[mode - lo] = 1;
  for (let x = mode; x < hi; x++) {
    w[x + 1 - lo] = (w[x - lo]! * ((r1 - x) * (c1 - x))) / ((x + 1) * (N - r1 - c1 + x + 1));
  }
  for (let x = mode; x > lo; x--) {
    // pmf(x−1)/pmf(x) = x (N − r1 − c1 + x) / ((r1 − x + 1)(c1 − x + 1))
    w[x - 1 - lo] = (w[x - lo]! * (x * (N - r1 - c1 + x))) / ((r1 - x + 1) * (c1 - x + 1));
  }
  const observed = w[a - lo]! * (1 + REL_TOL);
  let total = 0;
  let tail = 0;
  // Summing smallest-first on each side keeps the sums accurate.
  for (let i = 0; i < w.length; i++) {
    total += w[i]!;
    const x = lo + i;
    if (alternative === "two-sided" ? w[i]! <= observed : alternative === "greater" ? x >= a : x <= a) tail += w[i]!;
  }
  const point = w[a - lo]! / total;
  // Randomized: the observed table's own probability counts with weight u instead of 1.
  const p = u === undefined ? tail / total : Math.max(0, tail / total - (1 - u) * point);
  return { p: Math.min(1, p), oddsRatio, pointProbability: point };
}
