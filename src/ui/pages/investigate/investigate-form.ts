/**
 * The new-investigation form as plain data: what a person fills in (text, as
 * inputs hold it), the plan it makes (checked field by field, as the worker
 * checks it), and the same investigation as a command line for the CLI.
 */
import type { InvestigationPlan } from "../../../../workers/investigate-job.ts";
import { TIERS } from "../../../agent/repair.ts";
import type { Selection } from "../../../datasets/select.ts";
import { DEFAULT_JUDGE_FIELDS, cliJudgeWords, judgeChoiceOf, type JudgeFields } from "./judge-settings.ts";

/** The ceiling choices, lowest first, with what each tier adds. */
export const CEILINGS: readonly { readonly value: InvestigationPlan["maxTier"]; readonly label: string }[] = [
  { value: "none", label: "none — stop after the verdicts (no M5)" },
  { value: "L1", label: "L1 — prompt rewrites" },
  { value: "L2", label: "L2 — scaffolds (self-consistency, crop and re-ask)" },
  { value: "L3a", label: "L3a — read internals (attention-guided crop)" },
  { value: "L3b", label: "L3b — write internals (attention reweighting)" },
  {
    value: "L4",
    label: "L4 — fine-tunes LoRA on the last layer's attention here (small models), and writes the recipe",
  },
];

/** The form's fields as the inputs hold them (a number input bound by Svelte holds a number, or "" when empty). */
export interface InvestigateFields extends JudgeFields {
  dataset: string;
  split: string;
  tags: string;
  sample: string | number;
  question: string;
  maxTier: InvestigationPlan["maxTier"];
  holdout: string | number;
  seed: string | number;
  /** A judge picks each step (the rule policy in the page), the host keeps the rules (`--agentic`). */
  agentic: boolean;
  /** Turns the judge gets, refused ones included (`--max-turns`, default 20); the host stops the loop there. */
  maxTurns: string | number;
  /** Probe search before M1 (`--search-probes`): grows the dataset with failing variants of its scene questions. */
  searchProbes: boolean;
  /** Its budget of model calls (`--probe-budget`). */
  probeBudget: string | number;
  /** The endpoint judge also rewords the seeds' questions, each wording checked (`--judge-paraphrases`). */
  judgeParaphrases: boolean;
}

export const DEFAULT_QUESTION = "What predicts the hallucinations?";

export const DEFAULT_INVESTIGATE_FIELDS: InvestigateFields = {
  dataset: "",
  split: "",
  tags: "",
  sample: "",
  question: DEFAULT_QUESTION,
  maxTier: "L3b",
  holdout: "0.4",
  seed: "1",
  agentic: false,
  maxTurns: "20",
  searchProbes: false,
  probeBudget: "400",
  judgeParaphrases: false,
  ...DEFAULT_JUDGE_FIELDS,
};

/** A field's text, trimmed (numbers as they print; nothing for an empty field). */
export const fieldText = (v: unknown): string => (v === undefined || v === null ? "" : String(v)).trim();
const text = fieldText;

/**
 * The plan the fields describe; a wrong field throws naming it and what was expected.
 *
 * @example investigationPlan({ ...DEFAULT_INVESTIGATE_FIELDS, dataset: "pope", sample: "200" }) // { dataset: "pope", select: { sample: 200 }, question: "What predicts the hallucinations?", maxTier: "L3b", holdout: 0.4, seed: 1 }
 */
export function investigationPlan(fields: InvestigateFields): InvestigationPlan {
  const dataset = text(fields.dataset);
  if (!dataset) throw new Error("dataset: choose a stored dataset");
  const question = text(fields.question);
  if (!question) throw new Error('question: say what to find out, e.g. "What predicts the hallucinations?"');
  if (fields.maxTier !== "none" && !TIERS.includes(fields.maxTier))
    throw new Error(`ceiling: choose one of none, ${TIERS.join(", ")}`);
  const holdout = Number(text(fields.holdout));
  if (!text(fields.holdout) || !(holdout > 0 && holdout < 1))
    throw new Error(
      `holdout: a share strictly between 0 and 1 (e.g. 0.4 seals 40% of the cases), got '${text(fields.holdout)}'`,
    );
  const seed = Number(text(fields.seed));
  if (!text(fields.seed) || !Number.isInteger(seed) || seed < 0)
    throw new Error(`seed: a whole number ≥ 0 (e.g. 1), got '${text(fields.seed)}'`);
  const select: { -readonly [K in keyof Selection]: Selection[K] } = {};
  if (text(fields.split)) select.split = text(fields.split);
  const tags = text(fields.tags)
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  if (tags.length) select.tags = tags;
  if (text(fields.sample)) {
    const sample = Number(text(fields.sample));
    if (!Number.isInteger(sample) || sample < 1)
      throw new Error(`sample: a whole number of cases ≥ 1 (or empty for every case), got '${text(fields.sample)}'`);
    select.sample = sample;
  }
  const judge = fields.agentic ? judgeChoiceOf(fields) : undefined;
  let maxTurns: number | undefined;
  if (fields.agentic) {
    maxTurns = Number(text(fields.maxTurns));
    if (!text(fields.maxTurns) || !Number.isInteger(maxTurns) || maxTurns < 1 || maxTurns > 200)
      throw new Error(
        `max turns: a whole number of judge turns from 1 to 200 (default 20), got '${text(fields.maxTurns)}'`,
      );
  }
  let searchProbes: InvestigationPlan["searchProbes"];
  if (fields.searchProbes) {
    const budget = Number(text(fields.probeBudget));
    if (!text(fields.probeBudget) || !Number.isInteger(budget) || budget < 10)
      throw new Error(
        `probe budget: a whole number of model calls, at least 10 (e.g. 400), got '${text(fields.probeBudget)}'`,
      );
    // The tick is offered (and counts) only where it can work: an endpoint judge writes the wordings.
    searchProbes =
      fields.judgeParaphrases && judge?.kind === "endpoint" ? { budget, judgeParaphrases: true } : { budget };
  }
  return {
    dataset,
    ...(Object.keys(select).length ? { select } : {}),
    ...(searchProbes ? { searchProbes } : {}),
    question,
    maxTier: fields.maxTier,
    holdout,
    seed,
    ...(fields.agentic ? { agentic: true } : {}),
    ...(maxTurns !== undefined && maxTurns !== 20 ? { maxTurns } : {}),
    ...(judge && judge.kind !== "rules" ? { judge } : {}),
  };
}

/** A shell word, quoted only when it needs to be. */
function shellWord(word: string): string {
  return /^[\w./:=@+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * The same investigation for the CLI (the data file is the dataset's source
 * file; split and tag filters have no CLI flag and are said so).
 *
 * @example cliCommand(plan, "tiny-vlm", "pope.jsonl") // "evalrx investigate --model tiny-vlm --data pope.jsonl --sample 200 --seed 1 --holdout 0.4 --max-tier L3b -q 'What predicts the hallucinations?'"
 */
export function cliCommand(plan: InvestigationPlan, model: string, dataFile: string): string {
  const words = ["evalrx", "investigate", "--model", model, "--data", dataFile];
  if (plan.select?.sample !== undefined) words.push("--sample", String(plan.select.sample));
  words.push("--seed", String(plan.seed), "--holdout", String(plan.holdout), "--max-tier", plan.maxTier);
  if (plan.agentic) words.push("--agentic", ...cliJudgeWords(plan.judge));
  if (plan.maxTurns !== undefined) words.push("--max-turns", String(plan.maxTurns));
  if (plan.searchProbes) words.push("--search-probes", "--probe-budget", String(plan.searchProbes.budget));
  if (plan.searchProbes?.judgeParaphrases) words.push("--judge-paraphrases");
  words.push("-q", plan.question);
  const line = words.map(shellWord).join(" ");
  const unsupported = [plan.select?.split !== undefined ? "split" : "", plan.select?.tags ? "tags" : ""].filter(
    Boolean,
  );
  const notes = [
    unsupported.length ? `the CLI has no ${unsupported.join("/")} filter: give it a file of the selected cases` : "",
    plan.judge?.kind === "model" ? "the CLI has no local-model judge: it takes --judge URL, or the rule policy" : "",
  ].filter(Boolean);
  return notes.length ? `${line}   # ${notes.join("; ")}` : line;
}
