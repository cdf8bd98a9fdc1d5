import { canonicalJson } from "../../datasets/canonical.ts";
import { defineEvaluator, pick } from "../evaluator.ts";
import type { Evaluator } from "../types.ts";

export interface ExactOptions {
  /** Compare case- and whitespace-insensitively (trimmed, runs of spaces collapsed, lower case). Default false. */
  readonly normalize?: boolean;
  readonly name?: string;
}

/**
 * Is the output exactly what was expected? Compares the output (or its dotted
 * `field`) with `expected` (or the same field of it, when expected is an
 * object), as canonical JSON so key order does not matter.
 *
 * @example exact().check({ output: "yes", expected: "yes", … }) // { passed: true }
 * @example exact("label").check({ output: { label: "cat" }, expected: "dog", … }) // { passed: false, reason: 'got "cat", expected "dog"' }
 */
export function exact(field?: string, options: ExactOptions = {}): Evaluator {
  const normalize = options.normalize ?? false;
  const norm = (v: unknown): string =>
    typeof v === "string" && normalize ? v.trim().replace(/\s+/g, " ").toLowerCase() : canonicalJson(v ?? null);
  return defineEvaluator({
    name: options.name ?? "exact",
    parameters: { field: field ?? null, normalize },
    revision: 1,
    check: ({ output, expected }) => {
      const got = pick(output, field);
      const want = field && expected !== null && typeof expected === "object" ? pick(expected, field) : expected;
      if (want === undefined)
        throw new Error(`exact(): the case has no expected value${field ? ` at '${field}'` : ""}`);
      const passed = norm(got) === norm(want);
      return passed
        ? { passed }
        : { passed, reason: `got ${JSON.stringify(got ?? null)}, expected ${JSON.stringify(want)}` };
    },
  });
}
