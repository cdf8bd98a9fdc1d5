/**
 * What the playground draws from one explanation, as plain functions: the
 * image map a mode / layer / head picks, the colour of an answer token by
 * entropy or top-1 margin, and the strongest keys of a query row (the text
 * alternative of the attention matrix).
 */
import type { AnswerToken, Explanation } from "../../../../workers/explain.ts";
import type { FailureCase } from "../../../core/index.ts";
import { exact, yesNo } from "../../../evals/index.ts";
import { sequential } from "../../../figures/theme.ts";

/** How the image heatmap reads attention. */
export type MapMode = "mean" | "head" | "rollout" | "last";

export const MAP_MODES: readonly { readonly value: MapMode; readonly label: string; readonly about: string }[] = [
  {
    value: "mean",
    label: "mean over heads",
    about: "the answer tokens' attention to the image, averaged over the heads of a layer",
  },
  { value: "head", label: "one head", about: "the answer tokens' attention to the image in one head of a layer" },
  {
    value: "rollout",
    label: "rollout",
    about: "attention rollout through every layer, from the last prompt token to the image",
  },
  {
    value: "last",
    label: "last token",
    about: "the last prompt token's attention to the image (it predicts the first answer token), mean over heads",
  },
];

/** `layer` −1 stands for the mean over every layer. */
export interface MapChoice {
  readonly mode: MapMode;
  readonly layer: number;
  readonly head: number;
}

/**
 * The image cells' values for a choice, with what they are in words; undefined
 * when the explanation has no such map (no image, or no attention).
 *
 * @example imageMap(explanation, { mode: "head", layer: 1, head: 0 })?.label // "the answer's attention, layer 2, head 1"
 */
export function imageMap(ex: Explanation, choice: MapChoice): { values: number[]; label: string } | undefined {
  if (!ex.grid) return undefined;
  const cells = ex.grid[0] * ex.grid[1];
  if (choice.mode === "rollout")
    return ex.rollout
      ? { values: Array.from(ex.rollout), label: "attention rollout from the last prompt token" }
      : undefined;
  const maps = choice.mode === "last" ? ex.lastMaps : ex.answerMaps;
  if (!maps) return undefined;
  const { layers, heads } = ex;
  if (choice.layer < -1 || choice.layer >= layers)
    throw new RangeError(`layer ${choice.layer + 1} is not one of 1…${layers}`);
  if (choice.mode === "head" && !(choice.head >= 0 && choice.head < heads))
    throw new RangeError(`head ${choice.head + 1} is not one of 1…${heads}`);
  const chosenLayers = choice.layer === -1 ? Array.from({ length: layers }, (_, l) => l) : [choice.layer];
  const chosenHeads = choice.mode === "head" ? [choice.head] : Array.from({ length: heads }, (_, h) => h);
  const values = new Array<number>(cells).fill(0);
  for (const l of chosenLayers)
    for (const h of chosenHeads) {
      const at = (l * heads + h) * cells;
      for (let i = 0; i < cells; i++) values[i]! += maps[at + i]! / (chosenLayers.length * chosenHeads.length);
    }
  const where = `${choice.layer === -1 ? "mean over layers" : `layer ${choice.layer + 1}`}${choice.mode === "head" ? `, head ${choice.head + 1}` : ", mean over heads"}`;
  return {
    values,
    label: `${choice.mode === "last" ? "the last prompt token's attention" : "the answer's attention"}, ${where}`,
  };
}

/** What the token strip's colour says. */
export type TokenColouring = "entropy" | "margin";

/** Entropy is drawn on [0, ENTROPY_MAX] nats (more is clipped): 2 nats ≈ a choice among e² ≈ 7 tokens. */
export const ENTROPY_MAX = 2;

/**
 * How uncertain a token was, as t ∈ [0, 1] (0 = sure, 1 = unsure): its
 * entropy over [0, 2] nats, or one minus its top-1 margin.
 *
 * @example uncertainty({ entropy: 0.5, margin: 0.9 } as AnswerToken, "margin") // 0.1
 */
export function uncertainty(token: Pick<AnswerToken, "entropy" | "margin">, by: TokenColouring): number {
  const t = by === "entropy" ? token.entropy / ENTROPY_MAX : 1 - token.margin;
  return Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : Number.NaN;
}

/** The token's background on the ramp and a text colour that reads on it (dark text on the light end). */
export function tokenColours(t: number): { background: string; text: string } {
  if (!Number.isFinite(t)) return { background: "var(--panel)", text: "var(--text)" };
  // Cividis runs dark blue (0) to light yellow (1): uncertain tokens light, sure ones dark.
  return { background: sequential(t), text: t > 0.55 ? "#1d1d1f" : "#ffffff" };
}

/**
 * The `k` keys a query row attends to most, with their weights, from a
 * `size × size` matrix (row-major).
 *
 * @example strongestKeys(matrix, 3, 10, 2) // [{ key: 0, weight: 0.61 }, { key: 9, weight: 0.2 }]
 */
export function strongestKeys(
  matrix: ArrayLike<number>,
  size: number,
  query: number,
  k = 3,
): { key: number; weight: number }[] {
  if (!(query >= 0 && query < size)) throw new RangeError(`query ${query} is outside a ${size}-token matrix`);
  const row = Array.from({ length: size }, (_, key) => ({ key, weight: matrix[query * size + key]! }));
  return row
    .filter((r) => r.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.key - b.key)
    .slice(0, k);
}

/** A token as a person reads it: the tokenizer's space marks made visible, control characters escaped. */
export function tokenText(token: string): string {
  const shown = token.replace(/^Ġ|^▁/, "·").replace(/\n/g, "⏎");
  return shown === "" ? "∅" : shown;
}

/** The playground's verdict on one answer to a case: passed or not, by which check, and why not. */
export interface AnswerVerdict {
  readonly passed: boolean;
  readonly by: string;
  readonly reason?: string;
}

/**
 * Does this answer pass the case? Yes/no extraction (POPE's rule, as an
 * investigation labels yes/no cases) when the expected answer is yes or no,
 * else exact match after trimming, collapsing spaces and lower-casing (one
 * case has no dataset vocabulary for CHAIR). Undefined when the case has no
 * expected answer.
 *
 * @example judgeAnswer("Yes, there is.", { expected: "yes" }) // { passed: true, by: "yesNo" }
 */
export async function judgeAnswer(
  answer: string,
  row: Pick<FailureCase, "expected"> & Partial<FailureCase>,
): Promise<AnswerVerdict | undefined> {
  if (row.expected === undefined || row.expected === null || row.expected === "") return undefined;
  const want = String(row.expected).trim().toLowerCase();
  const check = want === "yes" || want === "no" ? yesNo() : exact(undefined, { normalize: true });
  const full: FailureCase = { id: "", input: { prompt: "" }, tags: [], status: "active", meta: {}, ...row };
  const result = await check.check({ output: answer, expected: row.expected, input: full.input, row: full });
  return { passed: result.passed, by: check.name, ...(result.reason ? { reason: result.reason } : {}) };
}
