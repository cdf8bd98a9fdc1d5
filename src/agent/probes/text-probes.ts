/**
 * Probe search for the bundled text model (tiny-lm: "reverse 3 1 4 =" → "4 1 3"):
 * rewordings of the instruction and distractors the task's grammar ignores
 * (expected answer unchanged), and edits of the operand digits (expected
 * answer recomputed from the edited digits). Every variant's expected answer
 * follows from how it was made, never from the model under test.
 */
import type { Model } from "../../core/model.ts";
import type { ProbeFamily, Rng } from "./probe-search.ts";
import { searchFromSeeds, type SeedSearchResult, type SeedSearchSettings } from "./search-from-seeds.ts";

/** A seed: one reversal case, `reverse <digits> =`. */
export interface TextSeed {
  readonly id: string;
  readonly prompt: string;
}

/** What one variant was made by: its family, its region, and the change in words. */
export interface TextEdit {
  readonly kind: "paraphrase" | "distractor" | "operand";
  readonly arm: string;
  /** The change, e.g. `lead-in 'please'`, `inserted 'note 7 2 .' before the instruction`, `digit 2: 4 → 9`. */
  readonly detail: string;
}

export interface SynthesizedTextCase {
  readonly id: string;
  readonly prompt: string;
  /** Right by construction: the operand digits (after any operand edit) reversed. */
  readonly expected: string;
  readonly answer: string;
  readonly provenance: {
    readonly synthesized: true;
    readonly parent: string;
    readonly family: string;
    readonly arm: string;
    readonly edit: TextEdit;
    /** The digits the instruction applies to, in order. */
    readonly operand: readonly number[];
  };
}

/**
 * The text families: `paraphrase` and `distractor` keep the meaning (the
 * expected answer is the seed's), `operand` changes the digits (the expected
 * answer is the new digits reversed).
 */
export const TEXT_FAMILIES: readonly ProbeFamily[] = [
  { name: "paraphrase", arms: ["lead-in", "object", "spacing"] },
  { name: "distractor", arms: ["digits-before", "sentence-before", "words-between"] },
  { name: "operand", arms: ["substitute", "insert", "delete", "swap", "extend"] },
];

/** Words before the instruction that keep its meaning ("please reverse …"). */
export const LEAD_INS = ["please", "now", "kindly", "ok ,"] as const;
/** Words naming what is reversed ("reverse the digits …"). */
export const OBJECTS = ["the digits", "these digits", "the sequence", "this list :"] as const;
/** Openers of a distractor sentence before the instruction; its digits are not the operand. */
export const DISTRACTOR_OPENERS = ["note", "earlier", "ignore", "unrelated :"] as const;
/** Separators put between operand digits; they are not digits, so the operand is unchanged. */
export const SEPARATORS = [",", "then", "and", ";"] as const;

/** The task's grammar: the word `reverse`, the operand digits, `=`. */
const TASK = /^reverse((?: \d)+) =$/;

/**
 * The operand of a reversal prompt in the task's canonical form, or undefined.
 *
 * @example reversalOperand("reverse 3 1 4 =") // [3, 1, 4]
 */
export function reversalOperand(prompt: string): number[] | undefined {
  const m = TASK.exec(prompt.trim().replace(/\s+/g, " "));
  return m ? m[1]!.trim().split(" ").map(Number) : undefined;
}

/** The answer the task asks for: the digits reversed, one space apart. */
export function reversed(digits: readonly number[]): string {
  return [...digits].reverse().join(" ");
}

export interface TextProbeOptions extends SeedSearchSettings {
  readonly seeds: readonly TextSeed[];
  readonly model: Model;
  /** Tokens generated per call (default 24, as M1 generates). */
  readonly maxNewTokens?: number;
}

export type TextProbeResult = SeedSearchResult<SynthesizedTextCase>;

/**
 * Which rewordings, distractors and operand edits of these reversal cases
 * does the model get wrong? Asks the seeds once, then runs {@link probeSearch}
 * over the text families with the model as the verifier (exact match, as M1's
 * `exact` evaluator labels). A failure is an answer that is not exactly the
 * expected one.
 *
 * @example
 * const r = await searchTextProbes({ seeds, model, budget: 400, seed: 1 }) // r.lift > 1 on tiny-lm
 */
export async function searchTextProbes(options: TextProbeOptions): Promise<TextProbeResult> {
  const seeds = options.seeds.map((s) => {
    const operand = reversalOperand(s.prompt);
    if (!operand)
      throw new RangeError(
        `searchTextProbes(): case ${s.id}: the prompt ${JSON.stringify(s.prompt)} is not "reverse <digits> =" (e.g. "reverse 3 1 4 =")`,
      );
    return { ...s, operand };
  });
  if (seeds.length === 0) throw new RangeError("searchTextProbes(): needs at least one seed case");
  const maxNewTokens = options.maxNewTokens ?? 24;
  const ask = async (prompt: string, expected: string) => {
    const answer = await options.model.generate({ prompt }, { maxNewTokens });
    return { answer, failed: answer !== expected };
  };
  let made = 0;
  return searchFromSeeds<SynthesizedTextCase>({
    ...options,
    families: options.families ?? TEXT_FAMILIES,
    seedCount: seeds.length,
    askSeed: async (i) => (await ask(seeds[i]!.prompt, reversed(seeds[i]!.operand))).failed,
    variant: (i, family, arm, rng) => {
      const s = seeds[i]!;
      const variant = textVariant(s.operand, family, arm, rng);
      if (!variant) return undefined;
      return {
        id: `${s.id}~${family}-${arm}-${++made}`,
        prompt: variant.prompt,
        expected: reversed(variant.operand),
        answer: "",
        provenance: { synthesized: true, parent: s.id, family, arm, edit: variant.edit, operand: variant.operand },
      };
    },
    ask: (c) => ask(c.prompt, c.expected),
    // The prompt is the whole input: two edits that write the same prompt are the same case.
    identity: (c) => c.prompt,
  });
}

/**
 * One variant of a reversal case: its prompt, the operand it asks about and
 * the edit, or undefined when the edit does not apply (nothing to swap).
 *
 * @example textVariant([3, 1, 4], "operand", "delete", rng) // { prompt: "reverse 3 4 =", operand: [3, 4], edit: … }
 */
export function textVariant(
  operand: readonly number[],
  family: string,
  arm: string,
  rng: Rng,
): { prompt: string; operand: number[]; edit: TextEdit } | undefined {
  const pick = <T>(xs: readonly T[]): T => xs[rng.below(xs.length)]!;
  const digit = () => rng.below(10);
  const digits = (n: number) => Array.from({ length: n }, digit);
  const plain = (d: readonly number[]) => `reverse ${d.join(" ")} =`;
  const same = [...operand];
  const edit = (kind: TextEdit["kind"], detail: string): TextEdit => ({ kind, arm, detail });
  switch (`${family}:${arm}`) {
    case "paraphrase:lead-in": {
      const w = pick(LEAD_INS);
      return { prompt: `${w} ${plain(same)}`, operand: same, edit: edit("paraphrase", `lead-in '${w}'`) };
    }
    case "paraphrase:object": {
      const w = pick(OBJECTS);
      return {
        prompt: `reverse ${w} ${same.join(" ")} =`,
        operand: same,
        edit: edit("paraphrase", `names what is reversed: '${w}'`),
      };
    }
    case "paraphrase:spacing": {
      // The same words, other whitespace: a tokenizer that splits on whitespace sees the same tokens.
      const words = plain(same).split(" ");
      const gaps = words.slice(1).map(() => pick([" ", "  ", "\t", " "]));
      const prompt = words.reduce((s, w, i) => (i === 0 ? w : s + gaps[i - 1]! + w), "") + pick(["", " ", "\n"]);
      return { prompt, operand: same, edit: edit("paraphrase", "whitespace between the words changed") };
    }
    case "distractor:digits-before": {
      const extra = digits(1 + rng.below(3));
      return {
        prompt: `${extra.join(" ")} ${plain(same)}`,
        operand: same,
        edit: edit("distractor", `inserted '${extra.join(" ")}' before the instruction`),
      };
    }
    case "distractor:sentence-before": {
      const sentence = `${pick(DISTRACTOR_OPENERS)} ${digits(1 + rng.below(3)).join(" ")} .`;
      return {
        prompt: `${sentence} ${plain(same)}`,
        operand: same,
        edit: edit("distractor", `inserted '${sentence}' before the instruction`),
      };
    }
    case "distractor:words-between": {
      if (same.length < 2) return undefined;
      const sep = pick(SEPARATORS);
      const every = rng.below(2) === 0;
      const at = 1 + rng.below(same.length - 1);
      const words = same.flatMap((d, i) => (i > 0 && (every || i === at) ? [sep, String(d)] : [String(d)]));
      return {
        prompt: `reverse ${words.join(" ")} =`,
        operand: same,
        edit: edit("distractor", every ? `'${sep}' between every two digits` : `'${sep}' before digit ${at + 1}`),
      };
    }
    case "operand:substitute": {
      const at = rng.below(same.length);
      const to = (same[at]! + 1 + rng.below(9)) % 10;
      const next = same.map((d, i) => (i === at ? to : d));
      return { prompt: plain(next), operand: next, edit: edit("operand", `digit ${at + 1}: ${same[at]} → ${to}`) };
    }
    case "operand:insert": {
      const at = rng.below(same.length + 1);
      const d = digit();
      const next = [...same.slice(0, at), d, ...same.slice(at)];
      return { prompt: plain(next), operand: next, edit: edit("operand", `inserted ${d} at position ${at + 1}`) };
    }
    case "operand:delete": {
      if (same.length < 2) return undefined;
      const at = rng.below(same.length);
      const next = same.filter((_, i) => i !== at);
      return { prompt: plain(next), operand: next, edit: edit("operand", `deleted digit ${at + 1} (${same[at]})`) };
    }
    case "operand:swap": {
      const pairs = same.slice(1).flatMap((d, i) => (d !== same[i] ? [i] : []));
      if (pairs.length === 0) return undefined;
      const at = pick(pairs);
      const next = [...same];
      [next[at], next[at + 1]] = [next[at + 1]!, next[at]!];
      return { prompt: plain(next), operand: next, edit: edit("operand", `swapped digits ${at + 1} and ${at + 2}`) };
    }
    case "operand:extend": {
      const extra = digits(1 + rng.below(3));
      const next = [...same, ...extra];
      return { prompt: plain(next), operand: next, edit: edit("operand", `appended ${extra.join(" ")}`) };
    }
    default:
      throw new RangeError(
        `searchTextProbes(): no edit '${family}:${arm}'; families are ${JSON.stringify(TEXT_FAMILIES)}`,
      );
  }
}
