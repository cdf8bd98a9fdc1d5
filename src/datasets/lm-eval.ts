import { UnreadableFileError } from "./errors.ts";
import { flattenInto, isObject, type Json, type LogRows } from "./logs.ts";

/**
 * lm-evaluation-harness samples (`--log_samples`), in every layout the
 * harness has written: `samples_<task>_<date>.jsonl` (one sample a line;
 * since June 2024), the same lines in a `.json` file (May–June 2024), and one
 * JSON list (earlier). `doc_id` → id, the request's context → input, `target`
 * → expected; `doc.*`, responses, the filter and every metric stay in meta.
 * A task run with several filters (gsm8k's `strict-match` and
 * `flexible-extract`) writes each doc once per filter: ids then carry the
 * filter (`3/strict-match`) and the rows of one doc share a cluster.
 */

/** Fields every sample has that are not metrics. */
const SAMPLE_KEYS = new Set([
  "doc_id",
  "doc",
  "target",
  "arguments",
  "resps",
  "filtered_resps",
  "filter",
  "metrics",
  "doc_hash",
  "prompt_hash",
  "target_hash",
]);

function prompt(sample: Json): unknown {
  const args = sample.arguments;
  // Older harness versions: [[context, continuation], …]; newer: { gen_args_0: { arg_0: context, … } }.
  if (Array.isArray(args) && Array.isArray(args[0]) && typeof args[0][0] === "string") return args[0][0];
  if (isObject(args)) {
    const first = Object.values(args)[0];
    if (isObject(first) && typeof first.arg_0 === "string") return first.arg_0;
  }
  const doc = sample.doc;
  if (isObject(doc))
    for (const key of ["query", "question", "prompt", "input", "text"])
      if (typeof doc[key] === "string") return doc[key];
  return undefined;
}

/** Does this JSON line or list element look like an lm-eval sample? */
export function isLmEvalSample(value: unknown): boolean {
  return (
    isObject(value) &&
    "doc_id" in value &&
    ("resps" in value || "filtered_resps" in value || "arguments" in value || "metrics" in value)
  );
}

/**
 * The samples of one lm-eval task as `LogRows` ready for `labelLog`. The
 * verdict columns are the task's metrics (listed in each sample's
 * `metrics`, or every numeric field when an old file lists none), so the
 * label is one binary metric for the whole file (`acc`, `exact_match`,
 * `bleu_acc` — never `bleu_max` for some rows); every metric is derived from
 * the label (they all score the same response against the same reference).
 *
 * @example labelLog(lmEvalLog([{ line: 1, value: { doc_id: 0, doc: {}, target: "4", acc: 1, metrics: ["acc"] } }])).label?.column // "acc"
 */
export function lmEvalLog(samples: readonly { readonly line: number; readonly value: unknown }[]): LogRows {
  const objects = samples.map((s) => s.value).filter(isObject);
  const metrics: string[] = [];
  for (const s of objects)
    if (Array.isArray(s.metrics))
      for (const m of s.metrics) if (typeof m === "string" && !metrics.includes(m)) metrics.push(m);
  if (metrics.length === 0)
    for (const s of objects)
      for (const [key, value] of Object.entries(s))
        if (
          !SAMPLE_KEYS.has(key) &&
          (typeof value === "number" || typeof value === "boolean") &&
          !metrics.includes(key)
        )
          metrics.push(key);
  const filters = new Set(objects.map((s) => s.filter).filter((f) => typeof f === "string"));
  const byFilter = filters.size > 1;
  const rows = samples.map(({ line, value }) => {
    if (!isObject(value)) return { line, row: value };
    const meta: Json = {};
    for (const [key, v] of Object.entries(value))
      if (key !== "doc_id" && key !== "doc" && key !== "arguments" && key !== "target") meta[key] = v;
    flattenInto(meta, "doc", value.doc);
    const docId = value.doc_id;
    const keyed = byFilter && docId !== undefined && docId !== null && typeof value.filter === "string";
    return {
      line,
      row: {
        id: keyed ? `${String(docId)}/${value.filter as string}` : docId,
        input: prompt(value),
        ...(value.target !== undefined && { expected: value.target }),
        ...(keyed && { cluster: `doc:${String(docId)}` }),
        meta,
      },
    };
  });
  return {
    tool: "lm-eval samples file",
    noun: "metric",
    rows,
    verdicts: metrics,
    derived: (label) => [...new Set([label, ...metrics])],
    warnings: [],
    problems: [],
  };
}

/** Is this parsed JSON an lm-eval aggregate results file (`results_<date>.json`): per-task scores, no samples? */
export function isLmEvalResults(value: unknown): boolean {
  if (!isObject(value) || !isObject(value.results) || Array.isArray(value.results)) return false;
  const tasks = Object.values(value.results);
  return (
    tasks.length > 0 &&
    tasks.every(isObject) &&
    ["versions", "configs", "n-shot", "higher_is_better", "n-samples", "group_subtasks", "config"].some(
      (k) => k in value,
    )
  );
}

/**
 * The refusal for an aggregate results file, naming the samples files that
 * hold what it summarises (`samples_<task>_<date>.jsonl` beside it, written with `--log_samples`).
 *
 * @example lmEvalResultsError(json, "results_2026-06-01T10-00-00.1.json").message // "… import samples_truthfulqa_gen_2026-06-01T10-00-00.1.jsonl …"
 */
export function lmEvalResultsError(value: Json, name?: string): UnreadableFileError {
  const tasks = Object.keys(value.results as Json);
  const date = /^results_(.+)\.json$/i.exec((name ?? "").split(/[\\/]/).pop() ?? "")?.[1] ?? "<date>";
  const files = tasks.slice(0, 6).map((t) => `samples_${t}_${date}.jsonl`);
  return new UnreadableFileError(
    `this is an lm-evaluation-harness results file: aggregate scores for ${tasks.length} task(s) (${tasks.slice(0, 6).join(", ")}${tasks.length > 6 ? ", …" : ""}), ` +
      `with no per-sample verdicts. Import the samples file(s) next to it instead: ${files.join(", ")}${tasks.length > 6 ? ", …" : ""}` +
      ` (lm_eval writes them with --log_samples)`,
  );
}
