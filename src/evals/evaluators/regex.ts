import { asText, defineEvaluator } from "../evaluator.ts";
import type { Evaluator } from "../types.ts";

export interface RegexOptions {
  readonly name?: string;
  /** Pass when the pattern does NOT match (e.g. a refusal pattern). Default false. */
  readonly negate?: boolean;
}

/**
 * Does the output match this pattern? A string is compiled with `flags`; the
 * version covers the pattern's source and flags.
 *
 * @example regex(/^(yes|no)\b/i).check({ output: "Yes, there is.", … }) // { passed: true }
 */
export function regex(pattern: RegExp | string, flags?: string, options: RegexOptions = {}): Evaluator {
  let compiled: RegExp;
  try {
    compiled =
      typeof pattern === "string" ? new RegExp(pattern, flags) : new RegExp(pattern.source, flags ?? pattern.flags);
  } catch (error) {
    throw new SyntaxError(
      `regex(): ${JSON.stringify(String(pattern))} is not a valid pattern (${(error as Error).message})`,
      { cause: error },
    );
  }
  const source = compiled.source;
  const usedFlags = compiled.flags.replace(/[gy]/g, "");
  const negate = options.negate ?? false;
  // Without the g and y flags, test() keeps no state between calls: one compiled pattern serves every trial.
  const matcher = new RegExp(source, usedFlags);
  return defineEvaluator({
    name: options.name ?? "regex",
    parameters: { source, flags: usedFlags, negate },
    revision: 1,
    check: ({ output }) => {
      const matched = matcher.test(asText(output));
      const passed = matched !== negate;
      return passed
        ? { passed }
        : { passed, reason: `${matched ? "matches" : "does not match"} /${source}/${usedFlags}` };
    },
  });
}
