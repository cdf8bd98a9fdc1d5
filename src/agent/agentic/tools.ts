/**
 * The tools a judge may call in the agentic loop, what each needs before it
 * may run, how often it may run, and the one reply shape the host accepts:
 * `{"tool": "...", "args": {...}, "why": "..."}`. The host checks all of this,
 * never the judge.
 */
import type { Stage } from "../events.ts";

export const TOOLS = [
  "run_probe",
  "explore_data",
  "run_stats",
  "cluster_failures",
  "search_probes",
  "run_analysis",
  "propose_hypotheses",
  "test_hypothesis",
  "run_surgery",
  "run_fix",
  "stop",
] as const;
export type ToolName = (typeof TOOLS)[number];

/** What each tool does, in the words the judge is shown. */
export const TOOL_HELP: Readonly<Record<ToolName, string>> = {
  run_probe:
    "M1: label every case with the evaluators and read the model's internals into per-case signals; splits exploration/sealed. args: {}",
  explore_data:
    "summarise the exploration records: each signal's mean in failures vs passes, and missing values. args: {}",
  run_stats: "M2: test every signal against failure on the exploration split and apply the screen. args: {}",
  cluster_failures:
    "group the exploration failures into failure modes (k-means, gap statistic) with their defining signals. args: {}",
  search_probes:
    "synthesise new failing variants of the cases (scene edits, paraphrases) within a model-call budget. args: {budget?: number}",
  run_analysis:
    "run your own JavaScript over the exploration records in a locked sandbox; `input.records` = [{id, failed, cluster?, signals}], return {tables?, figures?, notes?, suggestions?: [{signal, direction: 1|-1, why}]}. args: {code: string, purpose: string}",
  propose_hypotheses:
    "M3: state and FREEZE the hypotheses (the screened signals, plus any tested signals you name, e.g. an analysis' suggestions). Once. args: {signals?: string[]}",
  test_hypothesis: "M4: decide every frozen hypothesis once on the sealed split (opens it; once). args: {}",
  run_surgery:
    "M5: test the mechanism of a SUPPORTED attention hypothesis by writing the internal it names. args: {hypothesis: string}",
  run_fix: "M5: climb the repair ladder, validating each candidate against the untouched baseline. args: {}",
  stop: "end the run. args: {success: boolean, hypothesis?: string, summary: string}; success needs a tested, SUPPORTED, protocol-consistent hypothesis",
};

/** The stage a tool's work belongs to (its turn's events carry it). */
export const TOOL_STAGE: Readonly<Record<ToolName, Stage>> = {
  run_probe: "M1",
  explore_data: "M2",
  run_stats: "M2",
  cluster_failures: "M2",
  search_probes: "M1",
  run_analysis: "M2",
  propose_hypotheses: "M3",
  test_hypothesis: "M4",
  run_surgery: "M5",
  run_fix: "M5",
  stop: "report",
};

/** Calls allowed per tool, by default. A sealed split is read once, hypotheses freeze once. */
export const DEFAULT_CAPS: Readonly<Record<ToolName, number>> = {
  run_probe: 1,
  explore_data: 2,
  run_stats: 1,
  cluster_failures: 1,
  search_probes: 1,
  run_analysis: 3,
  propose_hypotheses: 1,
  test_hypothesis: 1,
  run_surgery: 1,
  run_fix: 1,
  stop: 1,
};

/** One judge reply, parsed and checked. */
export interface ToolCall {
  readonly tool: ToolName;
  readonly args: Readonly<Record<string, unknown>>;
  readonly why: string;
}

const ALLOWED_ARGS: Readonly<Record<ToolName, readonly string[]>> = {
  run_probe: [],
  explore_data: [],
  run_stats: [],
  cluster_failures: [],
  search_probes: ["budget"],
  run_analysis: ["code", "purpose"],
  propose_hypotheses: ["signals"],
  test_hypothesis: [],
  run_surgery: ["hypothesis"],
  run_fix: [],
  stop: ["success", "hypothesis", "summary"],
};

/** The JSON object in a reply: the whole text, or the first fenced or braced block in it. */
function jsonOf(text: string): unknown {
  const trimmed = text.trim();
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(trimmed);
  const candidates = [trimmed, fenced?.[1], trimmed.slice(trimmed.indexOf("{"), trimmed.lastIndexOf("}") + 1)];
  for (const c of candidates) {
    if (!c) continue;
    try {
      return JSON.parse(c);
    } catch {
      // try the next reading
    }
  }
  throw new Error(
    `the reply is not JSON; expected one object {"tool": ..., "args": {...}, "why": ...}, got ${JSON.stringify(trimmed.slice(0, 80))}`,
  );
}

/**
 * Reads a judge's reply as one tool call, or throws saying what is wrong with it (the host refuses the turn
 * with that reason).
 *
 * @example parseToolCall('{"tool": "run_stats", "args": {}, "why": "nothing tested yet"}') // { tool: "run_stats", args: {}, why: "nothing tested yet" }
 */
export function parseToolCall(text: string): ToolCall {
  const x = jsonOf(text);
  if (typeof x !== "object" || x === null || Array.isArray(x))
    throw new Error('the reply must be one JSON object {"tool", "args", "why"}');
  const o = x as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (!["tool", "args", "why"].includes(key))
      throw new Error(`the reply has a field '${key}'; allowed: tool, args, why`);
  if (typeof o.tool !== "string" || !(TOOLS as readonly string[]).includes(o.tool))
    throw new Error(`'tool' must be one of ${TOOLS.join(", ")}; got ${JSON.stringify(o.tool)}`);
  const tool = o.tool as ToolName;
  const args = o.args ?? {};
  if (typeof args !== "object" || args === null || Array.isArray(args))
    throw new Error(`'args' of ${tool} must be an object`);
  for (const key of Object.keys(args))
    if (!ALLOWED_ARGS[tool].includes(key))
      throw new Error(
        `${tool} takes ${ALLOWED_ARGS[tool].length ? `only ${ALLOWED_ARGS[tool].join(", ")}` : "no arguments"}; got '${key}'`,
      );
  const a = args as Record<string, unknown>;
  if (tool === "run_analysis" && (typeof a.code !== "string" || !a.code.trim()))
    throw new Error("run_analysis needs args.code: the JavaScript body to run over input.records");
  if (tool === "run_analysis" && a.purpose !== undefined && typeof a.purpose !== "string")
    throw new Error("run_analysis args.purpose must be a string");
  if (tool === "propose_hypotheses" && a.signals !== undefined)
    if (!Array.isArray(a.signals) || !a.signals.every((s) => typeof s === "string"))
      throw new Error("propose_hypotheses args.signals must be a list of signal names");
  if (tool === "search_probes" && a.budget !== undefined)
    if (typeof a.budget !== "number" || !Number.isInteger(a.budget) || a.budget < 1)
      throw new Error("search_probes args.budget must be a whole number of model calls ≥ 1");
  if (tool === "run_surgery" && typeof a.hypothesis !== "string")
    throw new Error("run_surgery needs args.hypothesis: the id of a SUPPORTED hypothesis (e.g. H1)");
  if (tool === "stop") {
    if (typeof a.success !== "boolean") throw new Error("stop needs args.success: true or false");
    if (a.hypothesis !== undefined && typeof a.hypothesis !== "string")
      throw new Error("stop args.hypothesis must be a hypothesis id (e.g. H1)");
    if (a.summary !== undefined && typeof a.summary !== "string") throw new Error("stop args.summary must be text");
  }
  const why = typeof o.why === "string" ? o.why.slice(0, 500) : "";
  return { tool, args: a, why };
}

/** Attention signals M5 can write back (image tokens' share or ratio, the sink's mass): run_surgery's targets. */
export const WRITABLE_ATTENTION = /^(attention\.image(Share|Ratio)|sink\.mass)/;
