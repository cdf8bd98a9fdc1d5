import { parseLabel } from "./row.ts";

/**
 * Mappers from the per-sample logs of tools people already use onto
 * dataset rows (`{ id, input, expected, label, meta }`, read by `rowToCase`).
 * Each keeps every other field in `meta` (flattened one level, as
 * `doc.subject`, `score.accuracy` …) so `explore` can test it as a signal.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Copies `source` into `meta` under `prefix.`, one level deep; arrays and objects below stay whole. */
function flattenInto(meta: Json, prefix: string, source: unknown): void {
  if (!isObject(source)) {
    if (source !== undefined) meta[prefix] = source;
    return;
  }
  for (const [key, value] of Object.entries(source)) meta[`${prefix}.${key}`] = value;
}

/** The text of a chat message's content (a string, or a list of parts with `text`). */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part) => (isObject(part) && typeof part.text === "string" ? part.text : ""))
      .filter(Boolean)
      .join("\n");
  return undefined;
}

/** The first image part of a chat message's content (Inspect: `{ type: "image", image }`). */
function contentImage(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  for (const part of content)
    if (isObject(part) && part.type === "image" && typeof part.image === "string") return part.image;
  return undefined;
}

/**
 * One line of an lm-evaluation-harness `samples_<task>_<date>.jsonl` as a
 * dataset row: `doc_id` → id, the request's context → input, `target` →
 * expected, the task's first metric (`acc`, `exact_match` …; listed in
 * `metrics`) → label when it is 1 or 0; `doc.*`, responses, filters and
 * every metric stay in meta.
 *
 * @example lmEvalRow({ doc_id: 3, arguments: [["Q: 2+2?", " 4"]], target: "4", acc: 1, metrics: ["acc"] })
 */
export function lmEvalRow(sample: unknown): unknown {
  if (!isObject(sample)) return sample;
  const meta: Json = {};
  const skip = new Set(["doc_id", "doc", "arguments", "target"]);
  for (const [key, value] of Object.entries(sample)) if (!skip.has(key)) meta[key] = value;
  flattenInto(meta, "doc", sample.doc);
  const metrics = Array.isArray(sample.metrics)
    ? sample.metrics.filter((m): m is string => typeof m === "string")
    : ["acc", "exact_match", "acc_norm"].filter((m) => m in sample);
  let label: boolean | undefined;
  for (const metric of metrics) {
    label = parseLabel(sample[metric]);
    if (label !== undefined) break;
  }
  return {
    id: sample.doc_id,
    input: lmEvalPrompt(sample),
    ...(sample.target !== undefined && { expected: sample.target }),
    ...(label !== undefined && { label }),
    meta,
  };
}

function lmEvalPrompt(sample: Json): unknown {
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

/**
 * The samples of an Inspect AI eval log (`inspect eval … --log-format json`)
 * as dataset rows: `id` (with `#epoch` when the log has several epochs) →
 * id, the last user message (text and first image) → input, `target` →
 * expected, the first scorer's value (C/I, 1/0, true/false) → label; the
 * output text, every score, `metadata.*`, timings and errors stay in meta.
 * Throws when the JSON is not an Inspect log.
 *
 * @example inspectRows({ eval: { task: "pope" }, samples: [{ id: 1, epoch: 1, input: "…", target: "yes", scores: { match: { value: "C" } } }] })
 */
export function inspectRows(log: unknown): unknown[] {
  if (!isObject(log) || !isObject(log.eval) || (log.samples !== undefined && !Array.isArray(log.samples)))
    throw new Error(
      "not an Inspect AI eval log: expected a JSON object with `eval` and `samples` (write it with --log-format json)",
    );
  const samples = (log.samples ?? []) as unknown[];
  const multiEpoch = samples.some((s) => isObject(s) && typeof s.epoch === "number" && s.epoch > 1);
  return samples.map((s) => {
    if (!isObject(s)) return s;
    const meta: Json = {};
    if (typeof s.epoch === "number") meta.epoch = s.epoch;
    let label: boolean | undefined;
    if (isObject(s.scores)) {
      for (const [name, score] of Object.entries(s.scores)) {
        const value = isObject(score) ? score.value : score;
        const verdict = parseLabel(value);
        if (label === undefined && verdict !== undefined) label = verdict;
        meta[`score.${name}`] = typeof value === "number" ? value : verdict !== undefined ? Number(verdict) : value;
        if (isObject(score) && score.answer !== undefined) meta[`answer.${name}`] = score.answer;
      }
    }
    flattenInto(meta, "metadata", s.metadata);
    const output = isObject(s.output) && Array.isArray(s.output.choices) ? s.output.choices[0] : undefined;
    if (isObject(output) && isObject(output.message)) meta.output = contentText(output.message.content);
    for (const key of ["total_time", "working_time", "error"]) if (s[key] !== undefined) meta[key] = s[key];
    if (isObject(s.output) && isObject(s.output.usage)) flattenInto(meta, "usage", s.output.usage);
    const id = s.id === undefined ? undefined : multiEpoch ? `${String(s.id)}#${String(s.epoch ?? 1)}` : s.id;
    return {
      id,
      input: inspectInput(s.input),
      ...(s.target !== undefined && { expected: s.target }),
      ...(label !== undefined && { label }),
      meta,
    };
  });
}

function inspectInput(input: unknown): unknown {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return input;
  const users = input.filter((m) => isObject(m) && m.role === "user") as Json[];
  const last = users.at(-1);
  if (!last) return undefined;
  const prompt = contentText(last.content);
  const image = contentImage(last.content);
  return prompt === undefined ? undefined : image ? { prompt, image } : { prompt };
}

/**
 * The results of a promptfoo eval (`promptfoo eval -o results.json`) as
 * dataset rows: the test index (with prompt and provider when a test ran
 * against several) → id, the rendered prompt → input, `vars.expected` →
 * expected, `success` → label; `vars.*`, score, latency, cost, provider,
 * output and the grader's reason stay in meta. Throws when the JSON is not a
 * promptfoo result file.
 *
 * @example promptfooRows({ results: { results: [{ testIdx: 0, promptIdx: 0, prompt: { raw: "…" }, success: true }] } })
 */
export function promptfooRows(file: unknown): unknown[] {
  const list = isObject(file)
    ? isObject(file.results) && Array.isArray(file.results.results)
      ? file.results.results
      : Array.isArray(file.results)
        ? file.results
        : undefined
    : undefined;
  if (!list)
    throw new Error(
      "not a promptfoo result file: expected { results: { results: [...] } } (write it with -o results.json)",
    );
  const base = list.map((r, i) => (isObject(r) && r.testIdx !== undefined ? String(r.testIdx) : String(i)));
  const clash = new Set(base).size !== base.length;
  return list.map((r, i) => {
    if (!isObject(r)) return r;
    const meta: Json = {};
    const vars = isObject(r.vars) ? r.vars : isObject(r.testCase) && isObject(r.testCase.vars) ? r.testCase.vars : {};
    flattenInto(meta, "vars", vars);
    for (const key of ["score", "latencyMs", "cost", "promptIdx", "testIdx", "failureReason", "error"])
      if (r[key] !== undefined && r[key] !== null) meta[key] = r[key];
    const provider = isObject(r.provider) ? r.provider.id : r.provider;
    if (provider !== undefined) meta.provider = provider;
    if (isObject(r.prompt) && r.prompt.label !== undefined) meta.promptLabel = r.prompt.label;
    if (isObject(r.response)) meta.output = r.response.output;
    if (isObject(r.gradingResult)) meta.reason = r.gradingResult.reason;
    if (isObject(r.namedScores)) flattenInto(meta, "namedScores", r.namedScores);
    const label = parseLabel(r.success ?? (isObject(r.gradingResult) ? r.gradingResult.pass : undefined));
    const prompt = isObject(r.prompt) && typeof r.prompt.raw === "string" ? r.prompt.raw : undefined;
    const id = clash ? `${base[i]}/${String(r.promptIdx ?? 0)}/${String(provider ?? "")}` : base[i];
    return {
      id,
      input:
        prompt ??
        (["prompt", "question", "input", "query"].map((k) => vars[k]).find((v) => typeof v === "string") as unknown),
      ...(vars.expected !== undefined && { expected: vars.expected }),
      ...(label !== undefined && { label }),
      meta,
    };
  });
}
