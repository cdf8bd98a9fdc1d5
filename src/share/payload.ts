/**
 * What a share link (or the JSON inside a bundle's share) holds, as a schema:
 * a report, or a run with its per-case verdicts. Everything decoded from a
 * link is untrusted, so every string is bounded and every field checked here
 * before a page renders any of it (as text).
 */
import * as v from "valibot";
import { REPORT_VERSION, ReportSchema, type Report } from "../report/schema.ts";
import { checkRunFile } from "../evals/run-file.ts";
import type { ItemRecord, RunExport, RunRecord } from "../store/types.ts";
import { ShareError } from "./errors.ts";

export const SHARE_FORMAT = "evalrx-share";
/** Bumped when what a share holds changes incompatibly. */
export const SHARE_VERSION = 1;

/** What a link may leave out to fit, each named so the page can say what is missing. */
export const OMISSIONS = {
  evidence: "the evidence cases (prompts, answers, images and attention maps behind each hypothesis)",
  figures: "the signal histograms",
  items: "the per-case verdicts and answers",
} as const;
export type Omission = keyof typeof OMISSIONS;

const name = v.pipe(v.string(), v.maxLength(2_000));
const text = v.pipe(v.string(), v.maxLength(100_000));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const num = v.nullable(v.number());
const config = v.pipe(
  v.record(v.string(), v.unknown()),
  v.check((c) => Object.keys(c).length <= 200, "must have at most 200 fields"),
);

const Metric = v.object({
  name,
  n: count,
  mean: num,
  lo: num,
  hi: num,
  se: v.optional(num),
  method: name,
  trials: count,
  passed: count,
  errored: count,
  score: v.optional(num),
  aggregate: v.optional(v.record(name, num)),
});

/** The summary a run share carries: the numbers `summarize` gave, without the fingerprint's per-case hashes. */
const RunSummary = v.object({
  cases: count,
  trials: count,
  errored: count,
  errorRate: num,
  repeats: count,
  clusterField: v.optional(name),
  pass: v.nullable(Metric),
  metrics: v.pipe(
    v.record(name, v.nullable(Metric)),
    v.check((m) => Object.keys(m).length <= 64, "at most 64"),
  ),
  passHatK: v.optional(v.object({ k: count, value: num })),
  latency: v.optional(v.nullable(v.object({ p50: num, p95: num, n: count }))),
});

const Check = v.object({
  name,
  passed: v.boolean(),
  version: v.optional(name),
  errored: v.optional(v.boolean()),
  score: v.optional(num),
  error: v.optional(text),
});

const Item = v.object({
  caseId: name,
  repeat: count,
  index: count,
  output: text,
  passed: v.boolean(),
  checks: v.pipe(v.array(Check), v.maxLength(64)),
  error: v.optional(text),
  latencyMs: v.number(),
});

const SharedRun = v.object({
  id: v.pipe(name, v.minLength(1)),
  kind: name,
  dataset: name,
  model: name,
  fingerprint: name,
  status: v.picklist(["running", "finished", "failed", "cancelled"]),
  startedAt: name,
  finishedAt: v.optional(name),
  config,
});

const Omitted = v.pipe(v.array(v.picklist(Object.keys(OMISSIONS) as Omission[])), v.maxLength(8));

const ReportEnvelope = v.object({
  format: v.literal(SHARE_FORMAT),
  version: v.literal(SHARE_VERSION),
  kind: v.literal("report"),
  omitted: Omitted,
  report: v.unknown(),
});

const RunEnvelope = v.object({
  format: v.literal(SHARE_FORMAT),
  version: v.literal(SHARE_VERSION),
  kind: v.literal("run"),
  omitted: Omitted,
  run: SharedRun,
  summary: v.optional(RunSummary),
  items: v.optional(v.pipe(v.array(Item), v.maxLength(1_000_000))),
});

/**
 * A stored run summary in the shape a run share carries, or undefined when it
 * is not one (an investigation's summary, say); extra fields are dropped.
 *
 * @example parseRunSummary(run.summary)?.pass?.mean // 0.87
 */
export function parseRunSummary(summary: unknown): SharedRunSummary | undefined {
  const parsed = v.safeParse(RunSummary, summary);
  return parsed.success ? parsed.output : undefined;
}

export type SharedItem = v.InferOutput<typeof Item>;
export type SharedRunRecord = v.InferOutput<typeof SharedRun>;
export type SharedRunSummary = v.InferOutput<typeof RunSummary>;
export type SharedMetric = v.InferOutput<typeof Metric>;

/** A report as a share carries it (per-case detail possibly left out: see `omitted`). */
export interface ReportShare {
  readonly format: typeof SHARE_FORMAT;
  readonly version: typeof SHARE_VERSION;
  readonly kind: "report";
  readonly omitted: readonly Omission[];
  readonly report: Report;
}

/** A run as a share carries it: its record, its summary and (when they fit) its items. */
export interface RunShare {
  readonly format: typeof SHARE_FORMAT;
  readonly version: typeof SHARE_VERSION;
  readonly kind: "run";
  readonly omitted: readonly Omission[];
  readonly run: SharedRunRecord;
  readonly summary?: SharedRunSummary;
  readonly items?: readonly SharedItem[];
}

export type SharePayload = ReportShare | RunShare;

/** A schema issue's place: its path, with keys that are not plain names shown as `[…]` (keys are payload too). */
const place = (issue: v.BaseIssue<unknown>) =>
  issue.path
    ?.map((p) => (typeof p.key === "number" || /^[\w-]{1,60}$/.test(String(p.key)) ? String(p.key) : "[…]"))
    .join(".") || "(top)";

/** What a value is, in a word: a refusal names the kind it got, never the value (that is payload). */
const kindOf = (x: unknown) =>
  x === null ? "null" : Array.isArray(x) ? "a list" : typeof x === "object" ? "an object" : `a ${typeof x}`;

/** A value from the payload as a refusal may quote it: a short plain word as JSON, anything else by its kind. */
const shown = (x: unknown) => (typeof x === "string" && /^[\w.-]{0,40}$/.test(x) ? JSON.stringify(x) : kindOf(x));

/**
 * The first few schema issues in words: where, what was expected, what kind
 * of value came. Never the value itself, so a refusal shows nothing of the
 * payload it refused.
 */
function issues(result: { issues: readonly v.BaseIssue<unknown>[] }): string {
  return result.issues
    .slice(0, 4)
    .map((issue) =>
      issue.kind === "schema"
        ? `${place(issue)}: expected ${issue.expected ?? "another value"}, got ${kindOf(issue.input)}`
        : `${place(issue)}: ${issue.message.replace(/ but received .*$/, "")}`,
    )
    .join("; ");
}

/**
 * A report read from untrusted data, checked against the report schema; the
 * refusal names where and what was expected, not the value found.
 *
 * @example checkReport(JSON.parse(text)).hypotheses.length // 4
 */
export function checkReport(data: unknown): Report {
  const version = (data as { version?: unknown } | null)?.version;
  if (data && typeof data === "object" && version !== REPORT_VERSION)
    throw new ShareError(
      "version",
      `the report is version ${typeof version === "number" ? version : kindOf(version)}; this EvalRx reads version ${REPORT_VERSION}`,
    );
  const parsed = v.safeParse(ReportSchema, data);
  if (!parsed.success) throw new ShareError("schema", `the report does not match its schema: ${issues(parsed)}`);
  return parsed.output;
}

/**
 * Is this parsed JSON a share this build can open? Checks the envelope, then
 * the report against the report schema, or the run's items against its plan
 * (`checkRunFile`: planned cases, repeats in range, verdicts that agree with
 * their checks). Throws a `ShareError` naming the first fields that are wrong.
 *
 * @example checkSharePayload(JSON.parse(text)) // { kind: "report", report, omitted: ["evidence"], … }
 */
export function checkSharePayload(data: unknown): SharePayload {
  const schemaError = (why: string, cause?: unknown): never => {
    throw new ShareError("schema", `this is not an EvalRx share: ${why}`, { cause });
  };
  if (!data || typeof data !== "object" || Array.isArray(data)) return schemaError("expected a JSON object");
  const d = data as Record<string, unknown>;
  if (d["format"] !== SHARE_FORMAT) return schemaError(`format is ${shown(d["format"])}, expected "${SHARE_FORMAT}"`);
  if (d["version"] !== SHARE_VERSION)
    throw new ShareError(
      "version",
      `this share is version ${typeof d["version"] === "number" ? d["version"] : shown(d["version"])}; this EvalRx reads version ${SHARE_VERSION} (a newer EvalRx made it?)`,
    );
  if (d["kind"] === "report") {
    const parsed = v.safeParse(ReportEnvelope, d);
    if (!parsed.success) return schemaError(issues(parsed));
    return { ...parsed.output, report: checkReport(parsed.output.report) };
  }
  if (d["kind"] === "run") {
    const parsed = v.safeParse(RunEnvelope, d);
    if (!parsed.success) return schemaError(issues(parsed));
    const share = parsed.output as RunShare;
    if (share.items) {
      try {
        checkRunFile(runExportOf(share), `run '${share.run.id}'`);
      } catch (error) {
        // The checks name the run and the case by id: kept when plain, else left out (ids are payload too).
        const message = (error as Error).message.replace(/'([^']*)'/g, (quoted, id: string) =>
          /^[\w.:-]{1,80}$/.test(id) ? quoted : "'…'",
        );
        return schemaError(message, error);
      }
    }
    return share;
  }
  return schemaError(`kind is ${shown(d["kind"])}, expected "report" or "run"`);
}

/**
 * The run file a run share stands for (its record and items; no dataset,
 * events or traces), as the store imports it: what "save to my runs" keeps.
 *
 * @example await store.importRun(runExportOf(share))
 */
export function runExportOf(share: RunShare, exportedAt = new Date(0).toISOString()): RunExport {
  const run: RunRecord = { ...share.run, ...(share.summary ? { summary: share.summary } : {}) } as RunRecord;
  const items: ItemRecord[] = (share.items ?? []).map((item) => ({ runId: run.id, ...item }) as ItemRecord);
  return {
    format: "evalrx-run",
    version: 1,
    exportedAt,
    run,
    items,
    events: [],
    scores: [],
    traces: [],
  };
}
