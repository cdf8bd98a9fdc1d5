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

function fail(path: string, expected: string, got: unknown): never {
  throw new Error(`eval config: ${path} is ${JSON.stringify(got) ?? "missing"}; expected ${expected}`);
}

/**
 * Reads an eval config from parsed JSON, checking every field and naming the
 * first that is wrong with what was expected.
 *
 * @example parseEvalConfig({ dataset: "pope.jsonl", model: "tiny-vlm", evaluators: ["yesNo"], repeats: 3 })
 */
export function parseEvalConfig(json: unknown): EvalConfig {
  if (json === null || typeof json !== "object" || Array.isArray(json)) fail("the config", "a JSON object", json);
  const c = json as Record<string, unknown>;
  const known = [
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
  for (const k of Object.keys(c)) if (!known.includes(k)) fail(`key '${k}'`, `one of ${known.join(", ")}`, c[k]);
  if (c["name"] !== undefined && (typeof c["name"] !== "string" || !c["name"]))
    fail("name", "a non-empty string", c["name"]);
  if (typeof c["dataset"] !== "string" || !c["dataset"]) fail("dataset", "a path to a dataset file", c["dataset"]);
  if (typeof c["model"] !== "string" || !c["model"]) fail("model", "a model key (tiny-vlm) or folder", c["model"]);
  if (!Array.isArray(c["evaluators"]) || c["evaluators"].length === 0)
    fail("evaluators", 'a non-empty list, e.g. ["yesNo"]', c["evaluators"]);
  (c["evaluators"] as unknown[]).forEach((e, i) => {
    const type = typeof e === "string" ? e : (e as { type?: unknown } | null)?.type;
    if (typeof type !== "string" || !(TYPES as readonly string[]).includes(type))
      fail(`evaluators[${i}]`, `a type among ${TYPES.join(", ")} (a string or { "type": … })`, e);
  });
  if (c["repeats"] !== undefined && !(Number.isInteger(c["repeats"]) && (c["repeats"] as number) >= 1))
    fail("repeats", "a positive integer", c["repeats"]);
  if (c["concurrency"] !== undefined && !(Number.isInteger(c["concurrency"]) && (c["concurrency"] as number) >= 1))
    fail("concurrency", "a positive integer", c["concurrency"]);
  if (c["cluster"] !== undefined && typeof c["cluster"] !== "string" && typeof c["cluster"] !== "boolean")
    fail("cluster", 'a case field ("cluster", "split", "meta.<key>") or true', c["cluster"]);
  for (const k of ["select", "generation", "gate"])
    if (c[k] !== undefined && (c[k] === null || typeof c[k] !== "object" || Array.isArray(c[k])))
      fail(k, "an object", c[k]);
  const g = c["generation"] as Record<string, unknown> | undefined;
  if (g) {
    for (const k of Object.keys(g))
      if (!["temperature", "maxNewTokens", "topK", "seed", "stop"].includes(k))
        fail(`generation.${k}`, "one of temperature, maxNewTokens, topK, seed, stop", g[k]);
    if (g["temperature"] !== undefined && !(typeof g["temperature"] === "number" && g["temperature"] >= 0))
      fail("generation.temperature", "a number ≥ 0", g["temperature"]);
    for (const k of ["maxNewTokens", "topK"])
      if (g[k] !== undefined && !(Number.isInteger(g[k]) && (g[k] as number) >= 1))
        fail(`generation.${k}`, "a positive integer", g[k]);
    if (g["seed"] !== undefined && !Number.isInteger(g["seed"])) fail("generation.seed", "an integer", g["seed"]);
  }
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
