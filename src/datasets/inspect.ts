import { UnreadableFileError } from "./errors.ts";
import { contentImage, contentText, flattenInto, isObject, kindOf, type Json, type LogRows } from "./logs.ts";
import { parseLabel } from "./row.ts";
import type { ImportWarning, Problem } from "./types.ts";

/**
 * Inspect AI logs: the samples of an eval log (`.json`, or the `.eval`
 * archive read by `inspect-eval.ts`) as dataset rows. `id` (with `#epoch`
 * when the log has several epochs, the epochs of one sample sharing a
 * cluster) → id, the last user message (text and first image) → input,
 * `target` → expected; every score (`score.<scorer>`, its `answer.` and
 * `explanation.`), `metadata.*`, the output text, usage, timings, errors and
 * limits stay in meta. `attachment://` references are resolved from the
 * sample's own `attachments`, where Inspect moves images and long texts.
 */

const ATTACHMENT = "attachment://";

/** Strings that are `attachment://<hash>` replaced by the sample's attachment (left as they are when it has none). */
function resolve(value: unknown, attachments: Json, depth = 0): unknown {
  if (typeof value === "string")
    return value.startsWith(ATTACHMENT) && typeof attachments[value.slice(ATTACHMENT.length)] === "string"
      ? attachments[value.slice(ATTACHMENT.length)]
      : value;
  // Only the few fields read here are walked (never the events), so a bound on depth is a guard, not a limit.
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => resolve(v, attachments, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, attachments, depth + 1)]));
}

/** One sample as read, before the file-level choices (ids with epochs, clusters, the label column). */
interface SampleRow {
  readonly sampleId: unknown;
  readonly epoch: number;
  readonly input: unknown;
  readonly expected?: unknown;
  readonly meta: Json;
  readonly scorers: readonly string[];
  readonly errored: boolean;
}

/** A scalar score as a number where it is a verdict (C/I, true/false → 1/0), as is otherwise. */
function scoreValue(value: unknown): unknown {
  if (typeof value === "number") return value;
  const verdict = parseLabel(value);
  return verdict === undefined ? value : Number(verdict);
}

/**
 * One Inspect sample (an `EvalSample`, or an `EvalSampleSummary` when the
 * archive has only those) as a row; a value that is not a sample comes back as it is.
 *
 * @example inspectSample({ id: 1, epoch: 1, input: "2+2?", target: "4", scores: { match: { value: "C" } } }).meta // { epoch: 1, "score.match": 1 }
 */
export function inspectSample(sample: unknown): SampleRow | unknown {
  if (!isObject(sample)) return sample;
  const attachments = isObject(sample.attachments) ? sample.attachments : {};
  const meta: Json = {};
  if (typeof sample.epoch === "number") meta.epoch = sample.epoch;
  const scorers: string[] = [];
  if (isObject(sample.scores)) {
    for (const [name, score] of Object.entries(sample.scores)) {
      scorers.push(name);
      const value = isObject(score) && "value" in score ? score.value : score;
      if (isObject(value)) for (const [k, v] of Object.entries(value)) meta[`score.${name}.${k}`] = scoreValue(v);
      else meta[`score.${name}`] = scoreValue(value);
      if (isObject(score)) {
        if (score.answer !== undefined && score.answer !== null)
          meta[`answer.${name}`] = resolve(score.answer, attachments);
        if (score.explanation !== undefined && score.explanation !== null)
          meta[`explanation.${name}`] = resolve(score.explanation, attachments);
      }
    }
  }
  flattenInto(meta, "metadata", resolve(sample.metadata, attachments));
  const choice = isObject(sample.output) && Array.isArray(sample.output.choices) ? sample.output.choices[0] : undefined;
  if (isObject(choice) && isObject(choice.message)) {
    const text = contentText(resolve(choice.message.content, attachments));
    if (text !== undefined) meta.output = text;
    if (typeof choice.stop_reason === "string") meta.stop_reason = choice.stop_reason;
  }
  for (const key of ["total_time", "working_time"]) if (typeof sample[key] === "number") meta[key] = sample[key];
  // A sample's error is an EvalError object; a summary's is its message.
  const error = isObject(sample.error) ? sample.error.message : sample.error;
  if (error !== undefined && error !== null) meta.error = error;
  const limit = isObject(sample.limit) ? sample.limit.type : sample.limit;
  if (limit !== undefined && limit !== null) meta.limit = limit;
  if (isObject(sample.output) && isObject(sample.output.usage)) flattenInto(meta, "usage", sample.output.usage);
  return {
    sampleId: sample.id,
    epoch: typeof sample.epoch === "number" ? sample.epoch : 1,
    input: inspectInput(resolve(sample.input, attachments)),
    ...(sample.target !== undefined && { expected: resolve(sample.target, attachments) }),
    meta,
    scorers,
    errored: error !== undefined && error !== null,
  };
}

function isSampleRow(value: unknown): value is SampleRow {
  return isObject(value) && "sampleId" in value && isObject(value.meta) && Array.isArray(value.scorers);
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

const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** What the header says of how the run went, as warnings with counts. */
function headerWarnings(header: Json, samples: number): ImportWarning[] {
  const results = isObject(header.results) ? header.results : {};
  const spec = isObject(header.eval) ? header.eval : {};
  const dataset = isObject(spec.dataset) ? spec.dataset : {};
  const epochs = isObject(spec.config) ? (count(spec.config.epochs) ?? 1) : 1;
  const completed = count(results.completed_samples);
  const total =
    count(results.total_samples) ??
    (count(dataset.samples) !== undefined ? count(dataset.samples)! * epochs : undefined);
  const of = `${completed ?? samples} of ${total ?? "?"} samples`;
  const warnings: ImportWarning[] = [];
  const status = header.status;
  if (status === "cancelled")
    warnings.push({ code: "run-cancelled", message: `the run was cancelled: ${of} completed`, count: samples });
  else if (status === "error") {
    const why = isObject(header.error) && typeof header.error.message === "string" ? header.error.message : "";
    warnings.push({
      code: "run-error",
      message: `the run stopped with an error${why ? ` (${why.split("\n")[0]!.slice(0, 200)})` : ""}: ${of} completed`,
      count: samples,
    });
  } else if (status === "started")
    warnings.push({
      code: "run-unfinished",
      message: `the log is of a run that had not finished (status 'started'): ${samples} sample(s) so far${total ? ` of ${total}` : ""}`,
      count: samples,
    });
  if (samples === 0)
    warnings.push({
      code: "no-samples",
      message:
        `the log holds no samples${completed ? ` although its header says ${completed} completed` : ""}: it was written` +
        ` or saved header-only (e.g. read_eval_log(header_only=True)); import the log Inspect wrote (logs/*.eval or the --log-format json file)`,
      count: 0,
    });
  return warnings;
}

/**
 * An Inspect log's samples as `LogRows` ready for `labelLog`: the header's
 * status and counts become warnings (cancelled, errored or unfinished runs; no
 * samples), as do errored samples. Verdict columns are the scorers' values
 * in the order they appear; the chosen scorer's value, answer and explanation
 * are derived from the label.
 *
 * @example labelLog(inspectLog(log.header, log.samples)).label?.column // "score.match"
 */
export function inspectLog(
  header: Json | undefined,
  samples: readonly { readonly line: number; readonly row: unknown }[],
  extra: { readonly warnings?: ImportWarning[]; readonly problems?: Problem[] } = {},
): LogRows {
  const read = samples.filter((s) => isSampleRow(s.row));
  const spec = header && isObject(header.eval) ? header.eval : {};
  const configured = isObject(spec.config) ? count(spec.config.epochs) : undefined;
  const epochs = (configured ?? 1) > 1 || read.some((s) => (s.row as SampleRow).epoch > 1);
  const scorers: string[] = [];
  for (const s of read)
    for (const name of (s.row as SampleRow).scorers) if (!scorers.includes(name)) scorers.push(name);
  const scoreColumns: string[] = [];
  for (const s of read)
    for (const key of Object.keys((s.row as SampleRow).meta))
      if (key.startsWith("score.") && !scoreColumns.includes(key)) scoreColumns.push(key);
  const rows = samples.map(({ line, row }) => {
    if (!isSampleRow(row)) return { line, row };
    const id = row.sampleId === undefined || row.sampleId === null ? undefined : row.sampleId;
    return {
      line,
      row: {
        id: epochs && id !== undefined ? `${String(id)}#${row.epoch}` : id,
        input: row.input,
        ...(row.expected !== undefined && { expected: row.expected }),
        ...(epochs && id !== undefined && { cluster: `sample:${String(id)}` }),
        meta: row.meta,
      },
    };
  });
  const warnings = [...(header ? headerWarnings(header, read.length) : []), ...(extra.warnings ?? [])];
  const errored = read.filter((s) => (s.row as SampleRow).errored).length;
  if (errored)
    warnings.push({
      code: "sample-errors",
      message: `${errored} sample(s) ended in an error (kept, with the message in the 'error' column); an errored sample has no score, so no label`,
      count: errored,
    });
  return {
    tool: "Inspect AI log",
    noun: "scorer",
    rows,
    verdicts: scoreColumns,
    derived(label) {
      const scorer = scorers.find((s) => label === `score.${s}` || label.startsWith(`score.${s}.`));
      if (scorer === undefined) return [label];
      return [
        ...scoreColumns.filter((c) => c === `score.${scorer}` || c.startsWith(`score.${scorer}.`)),
        `answer.${scorer}`,
        `explanation.${scorer}`,
      ];
    },
    warnings,
    problems: extra.problems ?? [],
  };
}

/** Is this parsed JSON an Inspect log (`--log-format json`): an object with `eval` and samples or a header? */
export function isInspectJson(value: unknown): boolean {
  return (
    isObject(value) &&
    isObject(value.eval) &&
    ("samples" in value || "status" in value || "results" in value || "version" in value)
  );
}

/**
 * An Inspect `.json` log as `LogRows`. Throws `UnreadableFileError` when the
 * JSON is not an Inspect log.
 *
 * @example labelLog(inspectJsonLog(JSON.parse(text))).rows.length // the samples
 */
export function inspectJsonLog(log: unknown): LogRows {
  if (!isInspectJson(log) || ((log as Json).samples !== undefined && !Array.isArray((log as Json).samples)))
    throw new UnreadableFileError(
      `not an Inspect AI eval log: expected a JSON object with \`eval\` and \`samples\`, got ${kindOf(log)}${
        isObject(log) ? ` with keys [${Object.keys(log).slice(0, 8).join(", ")}]` : ""
      }`,
    );
  const { samples, ...header } = log as Json;
  const list = (samples ?? []) as unknown[];
  return inspectLog(
    header,
    list.map((s, i) => ({ line: i + 1, row: inspectSample(s) })),
  );
}
