import type { Selection } from "../datasets/select.ts";
import { chair } from "./evaluators/chair.ts";
import { contains } from "./evaluators/contains.ts";
import { exact } from "./evaluators/exact.ts";
import { fuzzy } from "./evaluators/fuzzy.ts";
import { jsonMatch } from "./evaluators/json-match.ts";
import { judge } from "./evaluators/judge.ts";
import { regex } from "./evaluators/regex.ts";
import { yesNo } from "./evaluators/yes-no.ts";
import type { GateInit } from "./gate.ts";
import { openAICompatibleJudge, type Judge, type JudgeCache, type OpenAIJudgeOptions } from "./judge.ts";
import type { GenerationSettings } from "./run.ts";
import { nearest } from "./nearest.ts";
import type { Evaluator } from "./types.ts";

/** An evaluator as JSON: its type (the factory's name) and the factory's parameters. */
export type EvaluatorSpec =
  string | ({ readonly type: string; readonly name?: string } & Readonly<Record<string, unknown>>);

/** An eval as JSON (`evalrx eval <config.json>`). Paths are relative to the config file. */
export interface EvalConfig {
  /** The eval's name: runs with the same name are baselines of each other. */
  readonly name?: string;
  readonly dataset: string;
  readonly select?: Selection;
  /** A bundled model key (`tiny-vlm`) or a model folder. */
  readonly model: string;
  readonly evaluators: readonly EvaluatorSpec[];
  readonly repeats?: number;
  readonly cluster?: string | boolean;
  readonly variant?: string;
  readonly concurrency?: number;
  readonly generation?: GenerationSettings;
  readonly gate?: GateInit;
}

const TYPES = ["exact", "contains", "fuzzy", "jsonMatch", "regex", "yesNo", "chair", "judge"] as const;

/** The parameters each evaluator type takes (besides `type` and `name`). */
const PARAMETERS: Record<(typeof TYPES)[number], readonly string[]> = {
  exact: ["field", "normalize"],
  contains: ["needles", "caseSensitive"],
  fuzzy: ["threshold"],
  jsonMatch: ["keys"],
  regex: ["pattern", "flags", "negate"],
  yesNo: [],
  chair: ["vocabulary", "synonyms"],
  judge: ["baseUrl", "model", "rubric"],
};

/** Largest `repeats` a config may ask for: every case is generated this many times. */
export const MAX_REPEATS = 1000;
/** Largest `concurrency`: generations in flight at once. */
export const MAX_CONCURRENCY = 256;

const TOP_KEYS = [
  "name",
  "dataset",
  "select",
  "model",
  "evaluators",
  "repeats",
  "cluster",
  "variant",
  "concurrency",
  "generation",
  "gate",
  "$schema",
  "description",
];
const SELECT_KEYS = ["split", "tags", "ids", "sample", "includeArchived"];
const GENERATION_KEYS = ["temperature", "maxNewTokens", "topK", "seed", "stop"];
const GATE_KEYS = [
  "threshold",
  "baseline",
  "tolerance",
  "metrics",
  "mustPassTag",
  "maxErrorRate",
  "alpha",
  "strict",
  "bootstrap",
];

/** A value as a message shows it: JSON, shortened; never a JavaScript internal. */
function shown(got: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(got);
  } catch {
    text = undefined;
  }
  if (text === undefined) return typeof got === "undefined" ? "missing" : `a ${typeof got}`;
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function fail(path: string, expected: string, got: unknown): never {
  throw new Error(`eval config: ${path} is ${shown(got)}; expected ${expected}`);
}

/** Refuses a key that is not one of `known`, suggesting the nearest and listing them all. */
function onlyKnown(record: Record<string, unknown>, known: readonly string[], where: string, what: string): void {
  for (const key of Object.keys(record)) {
    if (known.includes(key)) continue;
    const guess = nearest(key, known);
    throw new Error(
      `eval config: ${where ? `${where}.` : ""}${key} is not ${what}${guess ? `; did you mean '${guess}'?` : ""} ` +
        `(${what.replace(/^an? /, "")}s are ${known.filter((k) => !k.startsWith("$")).join(", ")})`,
    );
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v: unknown, lo: number, hi: number) =>
  Number.isSafeInteger(v) && (v as number) >= lo && (v as number) <= hi;
const isNum = (v: unknown, lo: number, hi: number) => typeof v === "number" && Number.isFinite(v) && v >= lo && v <= hi;
const isStrings = (v: unknown, nonEmpty = false) =>
  Array.isArray(v) && v.every((x) => typeof x === "string" && (!nonEmpty || x !== ""));

/** A number, or `{ metric: number }`, each within [lo, hi] (exclusive bounds when `open`). */
function checkPerMetric(path: string, v: unknown, lo: number, hi: number, open: boolean, example: string): void {
  const ok = (x: unknown) =>
    typeof x === "number" && Number.isFinite(x) && (open ? x > lo && x < hi : x >= lo && x <= hi);
  const range = open ? `(${lo}, ${hi})` : `[${lo}, ${hi}]`;
  if (typeof v === "number") {
    if (!ok(v)) fail(path, `a number in ${range}, e.g. ${example}`, v);
    return;
  }
  if (!isObject(v) || Object.keys(v).length === 0)
    fail(path, `a number in ${range} or { "<metric>": number }, e.g. ${example}`, v);
  for (const [metric, x] of Object.entries(v)) if (!ok(x)) fail(`${path}.${metric}`, `a number in ${range}`, x);
}

function checkSelect(sel: Record<string, unknown>): void {
  onlyKnown(sel, SELECT_KEYS, "select", "a selection field");
  const split = sel["split"];
  if (split !== undefined && typeof split !== "string" && !isStrings(split))
    fail("select.split", "a split name or a list of them", split);
  for (const k of ["tags", "ids"])
    if (sel[k] !== undefined && !isStrings(sel[k], true)) fail(`select.${k}`, "a list of non-empty strings", sel[k]);
  if (sel["sample"] !== undefined && !isInt(sel["sample"], 1, Number.MAX_SAFE_INTEGER))
    fail("select.sample", "a positive integer (how many cases)", sel["sample"]);
  if (sel["includeArchived"] !== undefined && typeof sel["includeArchived"] !== "boolean")
    fail("select.includeArchived", "true or false", sel["includeArchived"]);
}

function checkGeneration(g: Record<string, unknown>): void {
  onlyKnown(g, GENERATION_KEYS, "generation", "a generation setting");
  if (g["temperature"] !== undefined && !isNum(g["temperature"], 0, 100))
    fail("generation.temperature", "a number ≥ 0 (0 is greedy)", g["temperature"]);
  if (g["maxNewTokens"] !== undefined && !isInt(g["maxNewTokens"], 1, 1_000_000))
    fail("generation.maxNewTokens", "a positive integer", g["maxNewTokens"]);
  if (g["topK"] !== undefined && !isInt(g["topK"], 1, 10_000_000))
    fail("generation.topK", "a positive integer", g["topK"]);
  if (g["seed"] !== undefined && !Number.isSafeInteger(g["seed"])) fail("generation.seed", "an integer", g["seed"]);
  const stop = g["stop"];
  if (stop !== undefined && !(isStrings(stop, true) && (stop as string[]).length <= 64))
    fail("generation.stop", 'a list of up to 64 non-empty strings, e.g. ["\\n"]', stop);
}

function checkGate(gate: Record<string, unknown>): void {
  onlyKnown(gate, GATE_KEYS, "gate", "a gate field");
  if (gate["threshold"] !== undefined) checkPerMetric("gate.threshold", gate["threshold"], 0, 1, false, "0.8");
  if (gate["tolerance"] !== undefined) checkPerMetric("gate.tolerance", gate["tolerance"], 0, 1, true, "0.03");
  if (gate["baseline"] !== undefined && (typeof gate["baseline"] !== "string" || !gate["baseline"]))
    fail("gate.baseline", 'a run id or "latest"', gate["baseline"]);
  if (gate["metrics"] !== undefined && !(isStrings(gate["metrics"], true) && (gate["metrics"] as string[]).length))
    fail("gate.metrics", 'a non-empty list of metric names, e.g. ["pass"]', gate["metrics"]);
  if (gate["mustPassTag"] !== undefined && gate["mustPassTag"] !== null && typeof gate["mustPassTag"] !== "string")
    fail("gate.mustPassTag", "a tag, or null for no must-pass tier", gate["mustPassTag"]);
  if (gate["maxErrorRate"] !== undefined && !isNum(gate["maxErrorRate"], 0, 1))
    fail("gate.maxErrorRate", "a number in [0, 1], e.g. 0.05", gate["maxErrorRate"]);
  if (gate["alpha"] !== undefined && !(isNum(gate["alpha"], 0, 1) && gate["alpha"] !== 0 && gate["alpha"] !== 1))
    fail("gate.alpha", "a number in (0, 1), e.g. 0.05", gate["alpha"]);
  if (gate["strict"] !== undefined && typeof gate["strict"] !== "boolean")
    fail("gate.strict", "true or false", gate["strict"]);
  if (gate["bootstrap"] !== undefined && !isInt(gate["bootstrap"], 100, 1_000_000))
    fail("gate.bootstrap", "an integer from 100 to 1000000, e.g. 2000", gate["bootstrap"]);
}

function checkEvaluator(e: unknown, i: number): void {
  const type = typeof e === "string" ? e : isObject(e) ? e["type"] : undefined;
  if (typeof type !== "string" || !(TYPES as readonly string[]).includes(type)) {
    const guess = typeof type === "string" ? nearest(type, TYPES) : undefined;
    fail(
      `evaluators[${i}]`,
      `a type among ${TYPES.join(", ")} (a string or { "type": … })${guess ? `; did you mean '${guess}'?` : ""}`,
      e,
    );
  }
  if (!isObject(e)) return;
  const known = ["type", "name", ...PARAMETERS[type as (typeof TYPES)[number]]];
  for (const key of Object.keys(e)) {
    if (known.includes(key)) continue;
    const guess = nearest(key, known);
    throw new Error(
      `eval config: evaluators[${i}].${key} is not a parameter of ${type}${guess ? `; did you mean '${guess}'?` : ""} ` +
        `(${type} takes ${known.join(", ")})`,
    );
  }
  if (e["name"] !== undefined && (typeof e["name"] !== "string" || !e["name"]))
    fail(`evaluators[${i}].name`, "a non-empty string", e["name"]);
}

/**
 * Reads an eval config from parsed JSON, checking every field: an unknown
 * key is refused with the nearest known one suggested, every value is checked
 * for its type and bounds (repeats ≤ 1000, rates in [0, 1], …), and
 * the first that is wrong is named with what was expected.
 *
 * @example parseEvalConfig({ dataset: "pope.jsonl", model: "tiny-vlm", evaluators: ["yesNo"], repeats: 3 })
 */
export function parseEvalConfig(json: unknown): EvalConfig {
  if (!isObject(json)) fail("the config", "a JSON object", json);
  const c = json;
  onlyKnown(c, TOP_KEYS, "", "a config key");
  if (c["name"] !== undefined && (typeof c["name"] !== "string" || !c["name"]))
    fail("name", "a non-empty string", c["name"]);
  for (const k of ["variant", "description", "$schema"])
    if (c[k] !== undefined && typeof c[k] !== "string") fail(k, "a string", c[k]);
  if (typeof c["dataset"] !== "string" || !c["dataset"]) fail("dataset", "a path to a dataset file", c["dataset"]);
  if (typeof c["model"] !== "string" || !c["model"]) fail("model", "a model key (tiny-vlm) or folder", c["model"]);
  if (!Array.isArray(c["evaluators"]) || c["evaluators"].length === 0)
    fail("evaluators", 'a non-empty list, e.g. ["yesNo"]', c["evaluators"]);
  (c["evaluators"] as unknown[]).forEach(checkEvaluator);
  if (c["repeats"] !== undefined && !isInt(c["repeats"], 1, MAX_REPEATS))
    fail("repeats", `a positive integer up to ${MAX_REPEATS}`, c["repeats"]);
  if (c["concurrency"] !== undefined && !isInt(c["concurrency"], 1, MAX_CONCURRENCY))
    fail("concurrency", `a positive integer up to ${MAX_CONCURRENCY}`, c["concurrency"]);
  const cluster = c["cluster"];
  if (
    cluster !== undefined &&
    typeof cluster !== "boolean" &&
    !(typeof cluster === "string" && /^(cluster|split|id|meta\..+)$/.test(cluster))
  )
    fail("cluster", 'a case field ("cluster", "split", "id", "meta.<key>") or true', cluster);
  for (const k of ["select", "generation", "gate"])
    if (c[k] !== undefined && !isObject(c[k])) fail(k, "an object", c[k]);
  if (c["select"]) checkSelect(c["select"] as Record<string, unknown>);
  if (c["generation"]) checkGeneration(c["generation"] as Record<string, unknown>);
  if (c["gate"]) checkGate(c["gate"] as Record<string, unknown>);
  return c as unknown as EvalConfig;
}

function str(spec: Readonly<Record<string, unknown>>, key: string, required: boolean): string | undefined {
  const v = spec[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string") fail(`${String(spec["type"])}.${key}`, "a string", v);
  return v;
}

function num(spec: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const v = spec[key];
  if (v !== undefined && typeof v !== "number") fail(`${String(spec["type"])}.${key}`, "a number", v);
  return v;
}

function bool(spec: Readonly<Record<string, unknown>>, key: string): boolean {
  const v = spec[key];
  if (v !== undefined && typeof v !== "boolean") fail(`${String(spec["type"])}.${key}`, "true or false", v);
  return v === true;
}

function strings(spec: Record<string, unknown>, key: string): string[] | undefined {
  const v = spec[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
    fail(`${String(spec["type"])}.${key}`, "a list of strings", v);
  return v as string[];
}

/**
 * The OpenAI-compatible judge a `{ "type": "judge", "baseUrl", "model" }`
 * entry names; a missing `baseUrl` or `model` is refused by name.
 *
 * @example judgeFromSpec({ type: "judge", baseUrl: "http://localhost:8000/v1", model: "qwen" }, { apiKey })
 */
export function judgeFromSpec(
  spec: Readonly<Record<string, unknown>>,
  options: Pick<OpenAIJudgeOptions, "apiKey"> = {},
): Judge {
  return openAICompatibleJudge({ baseUrl: str(spec, "baseUrl", true)!, model: str(spec, "model", true)!, ...options });
}

/**
 * The evaluators an eval config names. `judge` entries need an endpoint
 * (`baseUrl`, `model`); `judgeFor` builds their Judge (the CLI injects one
 * that reads the API key from EVALRX_JUDGE_KEY); `judgeCache` keeps their verdicts (the CLI's lives in its store).
 *
 * @example buildEvaluators(["yesNo", { type: "regex", pattern: "^(yes|no)\\b" }]) // [yesNo(), regex(/^(yes|no)\b/)]
 */
export function buildEvaluators(
  specs: readonly EvaluatorSpec[],
  judgeFor: (spec: Readonly<Record<string, unknown>>) => Judge = (spec) => judgeFromSpec(spec),
  judgeCache?: JudgeCache,
): Evaluator[] {
  return specs.map((raw) => {
    const spec: Record<string, unknown> = typeof raw === "string" ? { type: raw } : { ...raw };
    const name = str(spec, "name", false);
    const named = name !== undefined ? { name } : {};
    switch (spec["type"]) {
      case "exact":
        return exact(str(spec, "field", false), { ...named, normalize: bool(spec, "normalize") });
      case "contains":
        return contains(...(strings(spec, "needles") ?? []), {
          ...named,
          caseSensitive: bool(spec, "caseSensitive"),
        });
      case "fuzzy":
        return fuzzy(num(spec, "threshold") ?? 0.8, named);
      case "jsonMatch":
        return jsonMatch(strings(spec, "keys"), named);
      case "regex":
        return regex(str(spec, "pattern", true)!, str(spec, "flags", false), {
          ...named,
          negate: bool(spec, "negate"),
        });
      case "yesNo":
        return yesNo(named);
      case "chair": {
        const synonyms = spec["synonyms"];
        if (synonyms !== undefined && (synonyms === null || typeof synonyms !== "object"))
          fail("chair.synonyms", "an object mapping alias → vocabulary word", synonyms);
        return chair(strings(spec, "vocabulary") ?? [], (synonyms ?? {}) as Record<string, string>, named);
      }
      case "judge":
        return judge(judgeFor(spec), str(spec, "rubric", true)!, {
          ...named,
          ...(judgeCache ? { cache: judgeCache } : {}),
        });
      default:
        return fail("evaluator type", TYPES.join(", "), spec["type"]);
    }
  });
}
