import type { EvaluatorSpec, EvalConfig } from "../../../evals/config.ts";
import { parseEvalConfig } from "../../../evals/config.ts";
import type { DatasetRecord } from "../../../store/types.ts";

/** The evaluators the form offers, with the parameters each takes (the CLI's config names). */
export const EVALUATOR_TYPES = [
  { type: "yesNo", about: "POPE-style: reads yes / no from the answer and compares it with the expected one" },
  { type: "exact", about: "the answer equals the expected answer (optionally normalised)" },
  { type: "contains", about: "the answer contains every given text" },
  { type: "fuzzy", about: "the answer is close to the expected one (similarity ≥ threshold)" },
  { type: "regex", about: "the answer matches a regular expression" },
  { type: "jsonMatch", about: "the answer is JSON whose keys equal the expected JSON's" },
  { type: "chair", about: "object hallucination in captions (CHAIR_s / CHAIR_i) against a vocabulary" },
  { type: "judge", about: "an LLM grades the answer against a rubric (an OpenAI-compatible endpoint)" },
] as const;

export type EvaluatorType = (typeof EVALUATOR_TYPES)[number]["type"];

/** The form's fields: what a person types, as text where a person types text. */
export interface EvalFormFields {
  name: string;
  dataset: string;
  split: string;
  tags: string;
  sample: string;
  evaluators: Partial<Record<EvaluatorType, boolean>>;
  normalize: boolean;
  needles: string;
  threshold: string;
  pattern: string;
  flags: string;
  keys: string;
  vocabulary: string;
  judgeUrl: string;
  judgeModel: string;
  rubric: string;
  repeats: string;
  cluster: boolean;
  temperature: string;
  maxNewTokens: string;
  topK: string;
  seed: string;
  stop: string;
}

export const DEFAULT_FIELDS: EvalFormFields = {
  name: "",
  dataset: "",
  split: "",
  tags: "",
  sample: "",
  evaluators: {},
  normalize: true,
  needles: "",
  threshold: "0.8",
  pattern: "",
  flags: "i",
  keys: "",
  vocabulary: "",
  judgeUrl: "http://localhost:8000/v1",
  judgeModel: "",
  rubric: "",
  repeats: "1",
  cluster: false,
  temperature: "0",
  maxNewTokens: "16",
  topK: "",
  seed: "",
  stop: "",
};

const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** A field's text: number inputs bound with `bind:value` hold numbers (or null when empty). */
export const fieldText = (value: unknown): string =>
  (value === null || value === undefined ? "" : String(value)).trim();

function integer(field: string, value: string, min: number): number | undefined {
  const text = fieldText(value);
  if (text === "") return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${field}: '${text}' is not ${min === 0 ? "a whole number ≥ 0" : `a whole number ≥ ${min}`}`);
  return n;
}

function number(field: string, value: string, min: number): number | undefined {
  const text = fieldText(value);
  if (text === "") return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min) throw new Error(`${field}: '${text}' is not a number ≥ ${min}`);
  return n;
}

/**
 * The eval config (the CLI's format) the form describes, checked by the same
 * `parseEvalConfig` the CLI uses; throws naming the first field that is wrong.
 *
 * @example formConfig({ ...DEFAULT_FIELDS, dataset: "pope", evaluators: { yesNo: true } }, "tiny-vlm")
 *   // { name: "pope-yesNo", dataset: "pope", model: "tiny-vlm", evaluators: ["yesNo"], repeats: 1, generation: { temperature: 0, maxNewTokens: 16 } }
 */
export function formConfig(f: EvalFormFields, model: string): EvalConfig {
  if (!f.dataset) throw new Error("dataset: choose a stored dataset (import one on the Datasets page)");
  const chosen = EVALUATOR_TYPES.map((e) => e.type).filter((t) => f.evaluators[t]);
  if (chosen.length === 0) throw new Error("evaluators: tick at least one (yesNo for yes/no questions)");
  const evaluators: EvaluatorSpec[] = chosen.map((type) => {
    switch (type) {
      case "exact":
        return f.normalize ? { type, normalize: true } : type;
      case "contains": {
        const needles = list(f.needles);
        if (!needles.length) throw new Error("contains: give the texts the answer must contain, separated by commas");
        return { type, needles };
      }
      case "fuzzy":
        return { type, threshold: number("fuzzy threshold", f.threshold, 0) ?? 0.8 };
      case "regex":
        if (!f.pattern) throw new Error("regex: give a pattern, e.g. ^(yes|no)\\b");
        try {
          new RegExp(f.pattern, f.flags);
        } catch (error) {
          throw new Error(`regex: ${(error as Error).message}`, { cause: error });
        }
        return { type, pattern: f.pattern, ...(f.flags ? { flags: f.flags } : {}) };
      case "jsonMatch":
        return list(f.keys).length ? { type, keys: list(f.keys) } : type;
      case "chair": {
        const vocabulary = list(f.vocabulary);
        if (!vocabulary.length) throw new Error("chair: give the object vocabulary, separated by commas");
        return { type, vocabulary };
      }
      case "judge":
        if (!f.judgeModel || !f.rubric) throw new Error("judge: give the endpoint's model name and a rubric");
        return { type, baseUrl: f.judgeUrl, model: f.judgeModel, rubric: f.rubric };
      default:
        return type;
    }
  });
  const tags = list(f.tags);
  const sample = integer("sample", f.sample, 1);
  const select = {
    ...(f.split.trim() ? { split: f.split.trim() } : {}),
    ...(tags.length ? { tags } : {}),
    ...(sample !== undefined ? { sample } : {}),
  };
  const temperature = number("temperature", f.temperature, 0);
  const maxNewTokens = integer("max new tokens", f.maxNewTokens, 1);
  const topK = integer("top-k", f.topK, 1);
  const seed = integer("seed", f.seed, 0);
  const stop = list(f.stop);
  const generation = {
    ...(temperature !== undefined ? { temperature } : {}),
    ...(maxNewTokens !== undefined ? { maxNewTokens } : {}),
    ...(topK !== undefined ? { topK } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(stop.length ? { stop } : {}),
  };
  const repeats = integer("repeats", f.repeats, 1) ?? 1;
  return parseEvalConfig({
    name: f.name.trim() || `${f.dataset}-${chosen.join("+")}`,
    dataset: f.dataset,
    ...(Object.keys(select).length ? { select } : {}),
    model,
    evaluators,
    repeats,
    ...(f.cluster ? { cluster: true } : {}),
    ...(Object.keys(generation).length ? { generation } : {}),
  });
}

/**
 * Reads an eval config file the CLI runs (`evalrx eval config.json`) for the
 * page: its `dataset` path names the stored dataset whose id is the file's
 * base name without extension (as the CLI stores it). Throws naming what is
 * wrong, or which dataset to import first.
 *
 * @example pageConfig('{"dataset":"public/demo/pope.jsonl","model":"tiny-vlm","evaluators":["yesNo"]}', [pope]).dataset // "pope"
 */
export function pageConfig(text: string, datasets: readonly Pick<DatasetRecord, "id">[]): EvalConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`the config file is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const config = parseEvalConfig(json);
  const file = config.dataset.split(/[\\/]/).pop() ?? config.dataset;
  const id = file.replace(/\.[^.]+$/, "");
  const stored = datasets.find((d) => d.id === id || d.id === config.dataset);
  if (!stored)
    throw new Error(
      `the config names dataset '${config.dataset}' (id '${id}'), which is not stored in this browser; import ${file} on the Datasets page first` +
        (datasets.length ? ` (stored: ${datasets.map((d) => `'${d.id}'`).join(", ")})` : ""),
    );
  return { ...config, dataset: stored.id };
}

/** The form's fields for a config (to edit a config file that was opened). */
export function fieldsOf(config: EvalConfig): EvalFormFields {
  const f: EvalFormFields = { ...DEFAULT_FIELDS, evaluators: {} };
  f.name = config.name ?? "";
  f.dataset = config.dataset;
  const split = config.select?.split;
  f.split = typeof split === "string" ? split : (split?.join(",") ?? "");
  f.tags = config.select?.tags?.join(", ") ?? "";
  f.sample = config.select?.sample !== undefined ? String(config.select.sample) : "";
  for (const raw of config.evaluators) {
    const spec = typeof raw === "string" ? { type: raw } : raw;
    const type = spec.type as EvaluatorType;
    f.evaluators[type] = true;
    if (type === "exact") f.normalize = spec["normalize"] === true;
    if (type === "contains") f.needles = ((spec["needles"] as string[] | undefined) ?? []).join(", ");
    if (type === "fuzzy" && typeof spec["threshold"] === "number") f.threshold = String(spec["threshold"]);
    if (type === "regex") {
      f.pattern = String(spec["pattern"] ?? "");
      f.flags = String(spec["flags"] ?? "");
    }
    if (type === "jsonMatch") f.keys = ((spec["keys"] as string[] | undefined) ?? []).join(", ");
    if (type === "chair") f.vocabulary = ((spec["vocabulary"] as string[] | undefined) ?? []).join(", ");
    if (type === "judge") {
      f.judgeUrl = String(spec["baseUrl"] ?? "");
      f.judgeModel = String(spec["model"] ?? "");
      f.rubric = String(spec["rubric"] ?? "");
    }
  }
  f.repeats = String(config.repeats ?? 1);
  f.cluster = config.cluster === true || config.cluster === "cluster";
  const g = config.generation ?? {};
  f.temperature = g.temperature !== undefined ? String(g.temperature) : "0";
  f.maxNewTokens = g.maxNewTokens !== undefined ? String(g.maxNewTokens) : "";
  f.topK = g.topK !== undefined ? String(g.topK) : "";
  f.seed = g.seed !== undefined ? String(g.seed) : "";
  f.stop = g.stop?.join(", ") ?? "";
  return f;
}
