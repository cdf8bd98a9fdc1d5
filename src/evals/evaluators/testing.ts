import type { FailureCase } from "../../core/index.ts";
import type { CheckContext } from "../types.ts";

/** A check context for tests: one case with the given output and expected value. */
export function ctx(output: unknown, expected?: unknown, row: Partial<FailureCase> = {}): CheckContext {
  const full: FailureCase = {
    id: "c1",
    input: { prompt: "is there a red circle ?" },
    tags: [],
    status: "active",
    meta: {},
    ...row,
    ...(expected !== undefined ? { expected } : {}),
  };
  return { output, expected: full.expected, input: full.input, row: full };
}
