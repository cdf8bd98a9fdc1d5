import { canonicalJson } from "../datasets/canonical.ts";
import { sha256Hex } from "../datasets/hash.ts";
import type { CheckContext, CheckOutcome, CheckResult, Evaluator } from "./types.ts";

export interface EvaluatorDefinition {
  readonly name: string;
  /** Plain JSON: what makes two instances of the same check differ (`contains("a")` vs `contains("b")`). */
  readonly parameters?: Readonly<Record<string, unknown>>;
  readonly check: Evaluator["check"];
  /**
   * A declared version. Built-in evaluators declare a revision number (bumped when their logic changes)
   * instead of hashing their source, because the same source is transformed differently by tsx (the CLI)
   * and Vite (the page): a source hash would make the page's and the CLI's runs look incomparable.
   */
  readonly version?: string;
  readonly revision?: number;
  readonly kind?: Evaluator["kind"];
  readonly aggregate?: Evaluator["aggregate"];
}

const NAME = /^[A-Za-z_][\w.-]*$/;

/**
 * What is this check, and which version of it? Wraps a check function with its
 * name and a version: the declared one, else 12 hex of sha256 over the
 * canonical JSON of `{ name, parameters, revision | source }`.
 *
 * @example defineEvaluator({ name: "short", parameters: { max: 20 }, check: ({ output }) => ({ passed: String(output).length <= 20 }) })
 *   // { name: "short", version: "<12 hex>", kind: "deterministic", … }
 */
export function defineEvaluator(definition: EvaluatorDefinition): Evaluator {
  const { name, check } = definition;
  if (typeof name !== "string" || !NAME.test(name))
    throw new TypeError(
      `defineEvaluator(): name ${JSON.stringify(name)} is not a metric name; use letters, digits, '_', '.', '-' (e.g. "yesNo")`,
    );
  if (name === "pass")
    throw new TypeError(`defineEvaluator(): 'pass' is the eval's overall metric; name the evaluator something else`);
  if (typeof check !== "function") throw new TypeError(`defineEvaluator(): '${name}' has no check function`);
  const parameters = definition.parameters ?? {};
  const version =
    definition.version ??
    sha256Hex(
      canonicalJson({
        name,
        parameters,
        ...(definition.revision !== undefined ? { revision: definition.revision } : { source: check.toString() }),
      }),
    ).slice(0, 12);
  return {
    name,
    version,
    kind: definition.kind ?? "deterministic",
    parameters,
    check,
    ...(definition.aggregate ? { aggregate: definition.aggregate } : {}),
  };
}

/**
 * What did each evaluator say about this trial? Runs every check; one that
 * throws (or returns something that is not a verdict) is recorded as errored
 * with its message, and the others still run.
 *
 * @example await runChecks([exact(), yesNo()], { output: "yes", expected: "yes", input, row })
 *   // [{ name: "exact", passed: true, errored: false, … }, { name: "yesNo", passed: true, … }]
 */
export async function runChecks(evaluators: readonly Evaluator[], context: CheckContext): Promise<CheckOutcome[]> {
  return Promise.all(
    evaluators.map(async (evaluator): Promise<CheckOutcome> => {
      const base = { name: evaluator.name, version: evaluator.version };
      try {
        const result = validResult(await evaluator.check(context), evaluator.name);
        return {
          ...base,
          passed: result.passed,
          errored: false,
          ...(result.score !== undefined ? { score: result.score } : {}),
          ...(result.reason !== undefined ? { reason: result.reason } : {}),
          ...(result.data !== undefined ? { data: result.data } : {}),
        };
      } catch (error) {
        return { ...base, passed: false, errored: true, error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
}

function validResult(result: unknown, name: string): CheckResult {
  const r = result as CheckResult | null | undefined;
  if (!r || typeof r !== "object" || typeof r.passed !== "boolean")
    throw new TypeError(
      `evaluator '${name}' returned ${JSON.stringify(result)}; expected { passed: boolean, score?, reason? }`,
    );
  if (r.score !== undefined && (typeof r.score !== "number" || !Number.isFinite(r.score)))
    throw new TypeError(`evaluator '${name}' returned score ${String(r.score)}; expected a finite number`);
  return r;
}

/** The output as text, for text-based checks (objects as JSON). */
export function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `value.a.b` for a dotted `field`; the value itself without one. */
export function pick(value: unknown, field: string | undefined): unknown {
  if (!field) return value;
  let current: unknown = value;
  for (const key of field.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
