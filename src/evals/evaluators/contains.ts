import { asText, defineEvaluator } from "../evaluator.ts";
import type { Evaluator } from "../types.ts";

export interface ContainsOptions {
  readonly caseSensitive?: boolean;
  readonly name?: string;
}

/**
 * Does the output mention every needle? Needles are the given strings, or,
 * when none are given, `expected` (a string or a list of strings). Case-insensitive
 * unless asked; the score is the share of needles found.
 *
 * @example contains("red", "circle").check({ output: "a red circle", … }) // { passed: true, score: 1 }
 */
export function contains(...args: (string | ContainsOptions)[]): Evaluator {
  const needles = args.filter((a): a is string => typeof a === "string");
  const options = (args.find((a) => typeof a === "object") ?? {}) as ContainsOptions;
  const caseSensitive = options.caseSensitive ?? false;
  return defineEvaluator({
    name: options.name ?? "contains",
    parameters: { needles, caseSensitive },
    revision: 1,
    check: ({ output, expected }) => {
      let want: string[] = needles;
      if (want.length === 0) {
        if (typeof expected === "string") want = [expected];
        else if (Array.isArray(expected) && expected.every((e) => typeof e === "string")) want = expected;
        else
          throw new Error(
            `contains(): no needles given and expected is ${JSON.stringify(expected ?? null)}; give needles or a string (list) as expected`,
          );
      }
      if (want.length === 0) throw new Error("contains(): nothing to look for (an empty list of needles)");
      const fold = (s: string) => (caseSensitive ? s : s.toLowerCase());
      const hay = fold(asText(output));
      const missing = want.filter((n) => !hay.includes(fold(n)));
      const score = 1 - missing.length / want.length;
      return missing.length === 0
        ? { passed: true, score }
        : { passed: false, score, reason: `missing ${JSON.stringify(missing)}` };
    },
  });
}
