import { UnreadableFileError } from "./errors.ts";
import { flattenInto, isObject, kindOf, type Json, type LogRows } from "./logs.ts";

/**
 * promptfoo results (`promptfoo eval -o results.json`, versions 1 to 3) as
 * dataset rows: the test index (with prompt and provider when a test ran
 * against several) → id, the rendered prompt → input, the expected answer
 * where promptfoo keeps it → expected, `success` → label; `vars.*`, the
 * test's description and metadata, score, named scores, latency, cost,
 * provider, output and the grader's reason stay in meta.
 */

/** Assertion types whose value is a reference answer (not a rubric, a pattern or a program). */
const ANSWER_TYPES = new Set([
  "equals",
  "contains",
  "icontains",
  "starts-with",
  "similar",
  "levenshtein",
  "rouge-n",
  "bleu",
  "gleu",
  "meteor",
]);

function answerOf(assertion: unknown): unknown {
  if (!isObject(assertion) || typeof assertion.type !== "string" || !ANSWER_TYPES.has(assertion.type)) return undefined;
  return typeof assertion.value === "string" || typeof assertion.value === "number" ? assertion.value : undefined;
}

/**
 * `vars.__expected` as promptfoo reads a CSV test's expected column: `type:
 * value` for an assertion (`contains: Paris`), a rubric or program for the
 * grader, plain text for equality.
 */
function expectedFromCsv(text: string): string | undefined {
  const m = /^(not-)?([a-z][a-z0-9-]*)(?:\(\d+(?:\.\d+)?\))?:([\s\S]*)$/.exec(text);
  if (!m) return text;
  const [, negated, type, value] = m;
  if (negated) return undefined;
  if (ANSWER_TYPES.has(type!)) return value!.trim();
  // Graders, programs and patterns are not answers; any other "word:" is plain text compared for equality.
  return /^(javascript|python|grade|llm-rubric|fn|eval|file|regex|is-json|contains-json|model-graded-.*)$/.test(type!)
    ? undefined
    : text;
}

/**
 * The expected answer of a result: `vars.expected`, `vars.__expected`, the
 * first answer-like assertion of the test, or of the graded assertions.
 *
 * @example promptfooExpected({ testCase: { assert: [{ type: "icontains", value: "Lima" }] } }) // "Lima"
 */
export function promptfooExpected(result: Json, vars: Json = {}): unknown {
  if (vars.expected !== undefined && vars.expected !== null) return vars.expected;
  if (typeof vars.__expected === "string") {
    const fromCsv = expectedFromCsv(vars.__expected);
    if (fromCsv !== undefined) return fromCsv;
  }
  const asserts = isObject(result.testCase) && Array.isArray(result.testCase.assert) ? result.testCase.assert : [];
  for (const a of asserts) if (answerOf(a) !== undefined) return answerOf(a);
  const graded =
    isObject(result.gradingResult) && Array.isArray(result.gradingResult.componentResults)
      ? result.gradingResult.componentResults
      : [];
  for (const c of graded) if (isObject(c) && answerOf(c.assertion) !== undefined) return answerOf(c.assertion);
  return undefined;
}

/** Is this parsed JSON a promptfoo results file (or a serialised Eval object)? */
export function isPromptfoo(value: unknown): boolean {
  return (
    isObject(value) &&
    (Array.isArray(value.results) || (isObject(value.results) && Array.isArray(value.results.results)))
  );
}

/**
 * A promptfoo results file as `LogRows` ready for `labelLog`. Verdict columns:
 * `success`, then each named score; derived from the label: `success`,
 * `score`, the named scores, the grader's reason and the failure reason. A
 * file with no results (a serialised Eval object keeps them in promptfoo's
 * database) is said so. Throws `UnreadableFileError` when the JSON is not a
 * promptfoo result file.
 *
 * @example labelLog(promptfooLog({ results: { results: [{ testIdx: 0, prompt: { raw: "…" }, success: true }] } })).label?.column // "success"
 */
export function promptfooLog(file: unknown): LogRows {
  if (!isPromptfoo(file))
    throw new UnreadableFileError(
      `not a promptfoo result file: expected { results: { results: [...] } } (write it with promptfoo eval -o results.json), got ${kindOf(file)}`,
    );
  const top = file as Json;
  const list = (Array.isArray(top.results) ? top.results : (top.results as Json).results) as unknown[];
  const base = list.map((r, i) => (isObject(r) && r.testIdx !== undefined ? String(r.testIdx) : String(i)));
  const clash = new Set(base).size !== base.length;
  const named: string[] = [];
  const rows = list.map((r, i) => {
    if (!isObject(r)) return { line: i + 1, row: r };
    const meta: Json = {};
    const vars = isObject(r.vars) ? r.vars : isObject(r.testCase) && isObject(r.testCase.vars) ? r.testCase.vars : {};
    const { __expected: _expected, ...plainVars } = vars;
    flattenInto(meta, "vars", plainVars);
    if (isObject(r.testCase)) {
      if (typeof r.testCase.description === "string") meta.description = r.testCase.description;
      if (isObject(r.testCase.metadata)) flattenInto(meta, "metadata", r.testCase.metadata);
    }
    for (const key of ["score", "latencyMs", "cost", "promptIdx", "testIdx", "failureReason", "error"])
      if (r[key] !== undefined && r[key] !== null) meta[key] = r[key];
    const provider = isObject(r.provider) ? r.provider.id : r.provider;
    if (provider !== undefined) meta.provider = provider;
    if (isObject(r.prompt) && r.prompt.label !== undefined) meta.promptLabel = r.prompt.label;
    if (isObject(r.response)) meta.output = r.response.output;
    if (isObject(r.gradingResult)) meta.reason = r.gradingResult.reason;
    if (isObject(r.namedScores)) {
      flattenInto(meta, "namedScores", r.namedScores);
      for (const k of Object.keys(r.namedScores))
        if (!named.includes(`namedScores.${k}`)) named.push(`namedScores.${k}`);
    }
    const success = r.success ?? (isObject(r.gradingResult) ? r.gradingResult.pass : undefined);
    if (success !== undefined && success !== null) meta.success = success;
    const prompt = isObject(r.prompt) && typeof r.prompt.raw === "string" ? r.prompt.raw : undefined;
    const id = clash ? `${base[i]}/${String(r.promptIdx ?? 0)}/${String(provider ?? "")}` : base[i];
    const expected = promptfooExpected(r, vars);
    return {
      line: i + 1,
      row: {
        id,
        input:
          prompt ??
          (["prompt", "question", "input", "query"].map((k) => vars[k]).find((v) => typeof v === "string") as unknown),
        ...(expected !== undefined && { expected }),
        meta,
      },
    };
  });
  const warnings: LogRows["warnings"] = [];
  if (list.length === 0)
    warnings.push({
      code: "no-samples",
      message:
        "the file holds no results" +
        ("config" in top || "createdAt" in top
          ? ": it is a serialised promptfoo Eval, whose results stay in promptfoo's database; write them out with promptfoo eval -o results.json (or promptfoo export)"
          : ""),
      count: 0,
    });
  return {
    tool: "promptfoo results file",
    noun: "column",
    rows,
    verdicts: ["success", ...named],
    derived: (label) => [...new Set([label, "success", "score", "reason", "failureReason", ...named])],
    warnings,
    problems: [],
  };
}
