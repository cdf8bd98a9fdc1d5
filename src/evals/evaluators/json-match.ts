import { canonicalJson } from "../../datasets/canonical.ts";
import { defineEvaluator, pick } from "../evaluator.ts";
import type { Evaluator } from "../types.ts";

export interface JsonMatchOptions {
  readonly name?: string;
}

/**
 * Does the output object agree with the expected one on `keys` (dotted paths;
 * every key of expected when none are named)? A string output is parsed as
 * JSON first (an output that is not JSON fails, with the reason). The score is
 * the share of keys that agree.
 *
 * @example jsonMatch(["a"]).check({ output: '{"a":1,"b":2}', expected: { a: 1, b: 3 }, … }) // { passed: true, score: 1 }
 */
export function jsonMatch(keys?: readonly string[], options: JsonMatchOptions = {}): Evaluator {
  return defineEvaluator({
    name: options.name ?? "jsonMatch",
    parameters: { keys: keys ? [...keys] : null },
    revision: 1,
    check: ({ output, expected }) => {
      if (expected === null || typeof expected !== "object" || Array.isArray(expected))
        throw new Error(`jsonMatch(): expected is ${JSON.stringify(expected ?? null)}; it must be an object`);
      let got: unknown = output;
      if (typeof output === "string") {
        try {
          got = JSON.parse(output.trim());
        } catch {
          return { passed: false, score: 0, reason: "the output is not JSON" };
        }
      }
      if (got === null || typeof got !== "object" || Array.isArray(got))
        return { passed: false, score: 0, reason: "the output is not a JSON object" };
      const names = keys ? [...keys] : Object.keys(expected);
      if (names.length === 0) throw new Error("jsonMatch(): no keys to compare (expected is an empty object)");
      const same = (x: unknown, y: unknown) => canonicalJson(x ?? null) === canonicalJson(y ?? null);
      const wrong = names.filter((k) => !same(pick(got, k), pick(expected, k)));
      const score = 1 - wrong.length / names.length;
      return wrong.length === 0
        ? { passed: true, score }
        : { passed: false, score, reason: `differs on ${JSON.stringify(wrong)}` };
    },
  });
}
