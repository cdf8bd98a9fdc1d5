import { asText, defineEvaluator } from "../evaluator.ts";
import type { Evaluator } from "../types.ts";

/**
 * How similar are two strings, from 0 (nothing alike) to 1 (equal)? One minus
 * the Levenshtein distance over the longer length, on code points.
 *
 * @example similarity("kitten", "sitting") // 1 - 3/7 ≈ 0.571
 */
export function similarity(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  const longer = Math.max(x.length, y.length);
  if (longer === 0) return 1;
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitution = previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return 1 - previous[y.length]! / longer;
}

export interface FuzzyOptions {
  readonly caseSensitive?: boolean;
  readonly name?: string;
}

/**
 * Is the output close enough to what was expected? Normalised similarity in
 * [0, 1] (see `similarity`, whitespace trimmed and collapsed, case-folded unless asked); passes at `threshold`.
 *
 * @example fuzzy(0.8).check({ output: "a red circle", expected: "a red circles", … }) // { passed: true, score: 0.923 }
 */
export function fuzzy(threshold = 0.8, options: FuzzyOptions = {}): Evaluator {
  if (!(threshold >= 0 && threshold <= 1))
    throw new RangeError(`fuzzy(): threshold ${threshold} is not in [0, 1]; e.g. fuzzy(0.8)`);
  const caseSensitive = options.caseSensitive ?? false;
  const norm = (s: string) => {
    const t = s.trim().replace(/\s+/g, " ");
    return caseSensitive ? t : t.toLowerCase();
  };
  return defineEvaluator({
    name: options.name ?? "fuzzy",
    parameters: { threshold, caseSensitive },
    revision: 1,
    check: ({ output, expected }) => {
      if (expected === undefined || expected === null) throw new Error("fuzzy(): the case has no expected value");
      const score = similarity(norm(asText(output)), norm(asText(expected)));
      return score >= threshold
        ? { passed: true, score }
        : { passed: false, score, reason: `similarity ${score.toFixed(3)} < ${threshold}` };
    },
  });
}
