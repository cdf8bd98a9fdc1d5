/**
 * How well do two groupings of the same items agree, beyond chance? The
 * adjusted Rand index (Hubert & Arabie 1985): 1 for the same partition (the
 * group names may differ), about 0 for unrelated ones, negative when they
 * agree less than chance.
 *
 * @example adjustedRand([0, 0, 1, 1], [0, 0, 1, 2]) // ≈ 0.5714
 */
export function adjustedRand(a: ArrayLike<string | number>, b: ArrayLike<string | number>): number {
  if (a.length !== b.length)
    throw new RangeError(
      `adjustedRand(): the groupings label ${a.length} and ${b.length} items; they must be the same items`,
    );
  const n = a.length;
  if (n < 2) throw new RangeError(`adjustedRand(): needs at least 2 items, got ${n}`);
  const rows = new Map<string | number, number>();
  const cols = new Map<string | number, number>();
  const cells = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    rows.set(a[i]!, (rows.get(a[i]!) ?? 0) + 1);
    cols.set(b[i]!, (cols.get(b[i]!) ?? 0) + 1);
    const key = `${typeof a[i]}:${a[i]}\u0000${typeof b[i]}:${b[i]}`;
    cells.set(key, (cells.get(key) ?? 0) + 1);
  }
  const pairs = (m: number) => (m * (m - 1)) / 2;
  let index = 0;
  for (const m of cells.values()) index += pairs(m);
  let sumRows = 0;
  for (const m of rows.values()) sumRows += pairs(m);
  let sumCols = 0;
  for (const m of cols.values()) sumCols += pairs(m);
  const expected = (sumRows * sumCols) / pairs(n);
  const max = (sumRows + sumCols) / 2;
  // Both groupings put every item in one group (or each in its own): they agree perfectly.
  if (max === expected) return 1;
  return (index - expected) / (max - expected);
}
