/**
 * Which of the known names did the user mean? The known name closest to
 * `word` by edit distance (insertions, deletions, substitutions, and
 * swapping two neighbours), when it is close enough to be a typo: at most
 * one edit for short names, a third of the length for long ones. Case is ignored.
 *
 * @example nearest("repeat", ["repeats", "cluster"]) // "repeats"
 * @example nearest("zzz", ["repeats", "cluster"]) // undefined
 */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(w, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const allowed = Math.max(1, Math.floor(Math.max(w.length, 3) / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of one substring). */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Infinity;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++)
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}
