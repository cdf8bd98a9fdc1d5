/**
 * M3 diagnose: each signal that survived M2 becomes a falsifiable hypothesis
 * — a named mechanism, the signal, its direction and effect on the
 * exploration split, and what would refute it on the sealed split. Competing
 * hypotheses are all kept; M4 decides each. A judge, when configured, may
 * rewrite the mechanism; the rule-based path works alone.
 */
import type { Direction } from "./association.ts";
import type { EventLog } from "./events.ts";
import type { SignalFinding } from "./explore.ts";
import type { Judge } from "./judge.ts";
import { mechanismOf } from "./mechanisms.ts";
import { mergeNote, sameMeasurementGroups, type SameMeasurement } from "./same-measurement.ts";

export interface Hypothesis {
  readonly id: string;
  /** The column or analyzer signal it rests on. */
  readonly signal: string;
  readonly column: string;
  readonly kind: SignalFinding["kind"];
  readonly level?: string;
  readonly mechanism: string;
  /** Who wrote the mechanism: "rules" or "judge". */
  readonly author: "rules" | "judge";
  readonly statement: string;
  readonly direction: Direction;
  /** "higher in failures", "lower in failures", "failure more likely when present", … */
  readonly directionText: string;
  readonly test: SignalFinding["association"]["test"];
  readonly exploreEffect: {
    readonly name: string;
    readonly value: number;
    readonly nullValue: number;
    readonly lo: number;
    readonly hi: number;
  };
  readonly exploreN: number;
  readonly exploreE: number;
  /** The exploration split's two-sided p-value (it sets the hypothesis' share of α in M4). */
  readonly exploreP: number;
  /** The exploration test's unit of inference. */
  readonly exploreUnit?: "case" | "cluster";
  /** Refuted when the sealed interval's end in the stated direction lies closer to the null than this distance. */
  readonly refuteMargin: number;
  readonly refutation: string;
  readonly tags: readonly string[];
  /** Surviving signals that are the same measurement as this one (identical, or a monotone function of it), merged in. */
  readonly merged?: readonly { readonly signal: string; readonly relation: SameMeasurement }[];
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toFixed(3) : String(x);
}

/** Words for the direction of a signal of this kind. */
export function directionText(kind: SignalFinding["kind"], direction: Direction): string {
  if (kind === "binary") return direction > 0 ? "failure more likely when present" : "failure less likely when present";
  return direction > 0 ? "higher in failures" : "lower in failures";
}

/**
 * States the hypotheses, logs each (`hypothesis.stated`), and freezes them
 * (`hypotheses.frozen`): after this event nothing about them may change, and
 * only then may the sealed split be opened. Survivors that are the same
 * measurement on the exploration split (identical values, or one a strictly
 * monotone function of the other; see `sameMeasurementGroups`) become one
 * hypothesis, on the strongest of them, which names the others as merged.
 *
 * Example: one selected finding on `attention_share` with AUC 0.31 →
 * `[{ id: "H1", signal: "attention_share", direction: -1, mechanism: "weak visual grounding: …", … }]`.
 */
export async function diagnose(
  findings: readonly SignalFinding[],
  log: EventLog,
  options: {
    readonly judge?: Judge;
    readonly maxHypotheses?: number;
    /**
     * The exploration split's values of each signal (by name): survivors that are the same measurement
     * (identical, or one a strictly monotone function of the other) become one hypothesis, the strongest kept.
     */
    readonly values?: ReadonlyMap<string, ArrayLike<number>>;
    /** Hypotheses written elsewhere (failure modes), stated and frozen with these and numbered after them. */
    readonly candidates?: readonly Omit<Hypothesis, "id">[];
    /** Reorders the stated hypotheses before they are numbered (earlier runs' lessons); which are stated is unchanged. */
    readonly reorder?: (signals: readonly SignalFinding[]) => SignalFinding[];
  } = {},
): Promise<Hypothesis[]> {
  const screened = findings
    .filter((f) => f.selected && f.association.observedDirection !== 0)
    .sort((a, b) => b.association.e - a.association.e);
  const groups = options.values
    ? sameMeasurementGroups(
        screened
          .filter((f) => options.values!.has(f.signal))
          .map((f) => ({ name: f.signal, values: options.values!.get(f.signal)! })),
      )
    : [];
  const mergedInto = new Map(groups.map((g) => [g.kept, g.merged]));
  const gone = new Set(groups.flatMap((g) => g.merged.map((m) => m.signal)));
  const survivors = screened.filter((f) => !gone.has(f.signal));
  const cut = survivors.slice(0, options.maxHypotheses ?? 12);
  const selected = options.reorder ? options.reorder(cut) : cut;
  const hypotheses: Hypothesis[] = [];
  for (const [k, f] of selected.entries()) {
    const direction = f.association.observedDirection as Direction;
    const { mechanism: baseMechanism, tags, known } = mechanismOf(f.signal, direction, f.tags);
    // A binary covariate reads better as "when <level>" than as "more of it".
    const ruleMechanism =
      !known && f.kind === "binary"
        ? `covariate: failure ${direction > 0 ? "more" : "less"} likely when '${f.column}' is '${f.level}' (an association; no mechanism is implied)`
        : known && f.kind === "binary" && f.level !== undefined
          ? `${baseMechanism} ('${f.column}' = '${f.level}')`
          : baseMechanism;
    const effect = f.association.effect;
    // Half of the exploration interval's end nearest the null, not of the point estimate: a signal
    // selected for its exploration effect overstates it (winner's curse), so the point would refute too easily.
    const near = direction > 0 ? effect.interval.lo - effect.nullValue : effect.nullValue - effect.interval.hi;
    const refuteMargin = Number.isFinite(near) ? Math.max(0, near) / 2 : 0;
    const dirText = directionText(f.kind, direction);
    let mechanism = ruleMechanism;
    let author: Hypothesis["author"] = "rules";
    if (options.judge) {
      const answer = await options.judge(
        [
          "You write one falsifiable mechanism for a model failure, in one sentence.",
          `Signal: ${f.signal} (${f.kind}); ${dirText}; ${effect.name} = ${fmt(effect.value)} on ${f.association.n} exploration cases.`,
          `A rule-based reading: ${ruleMechanism}`,
          "Answer with the mechanism only.",
        ].join("\n"),
      );
      const line = answer.trim().split("\n")[0]?.trim();
      if (line) {
        mechanism = line.slice(0, 400);
        author = "judge";
      }
    }
    let critique: string | undefined;
    if (options.judge) {
      const answer = await options.judge(
        [
          "Critique this hypothesis about a model's failures in one sentence: what else could explain the association, and what observation would refute it?",
          `Hypothesis: ${mechanism}`,
          `Evidence so far: ${f.signal} is ${dirText} (${effect.name} = ${fmt(effect.value)}, ${f.association.n} exploration cases).`,
        ].join("\n"),
      );
      critique = answer.trim().split("\n")[0]?.trim().slice(0, 400) || undefined;
    }
    const merged = mergedInto.get(f.signal);
    const towards = direction > 0 ? "above" : "below";
    const bound = direction > 0 ? effect.nullValue + refuteMargin : effect.nullValue - refuteMargin;
    hypotheses.push({
      id: `H${k + 1}`,
      signal: f.signal,
      column: f.column,
      kind: f.kind,
      level: f.level,
      mechanism,
      author,
      statement:
        `${f.signal}: ${dirText} (${effect.name} ${fmt(effect.value)} on exploration, null ${fmt(effect.nullValue)})` +
        (merged ? `; the same measurement as ${merged.map(mergeNote).join(", ")}, merged into this hypothesis` : ""),
      direction,
      directionText: dirText,
      test: f.association.test,
      exploreEffect: { ...effect, lo: effect.interval.lo, hi: effect.interval.hi },
      exploreN: f.association.n,
      exploreE: f.association.e,
      exploreP: f.association.p,
      exploreUnit: f.association.unit,
      refuteMargin,
      refutation:
        `REFUTED if, on the sealed split, the 95% interval of the ${effect.name} does not reach ${towards} ${fmt(bound)} ` +
        `(half the exploration interval's end nearest the null, which selection does not inflate); SUPPORTED needs the same test one-sided ${direction > 0 ? "upward" : "downward"} with an e-value that survives e-BH at α over the hypotheses frozen` +
        (critique ? `. Judge's critique: ${critique}` : ""),
      tags,
      ...(merged ? { merged } : {}),
    });
  }
  for (const c of options.candidates ?? []) hypotheses.push({ ...c, id: `H${hypotheses.length + 1}` });
  for (const h of hypotheses) log.append("M3", "hypothesis.stated", { ...h });
  log.append("M3", "hypotheses.frozen", {
    ids: hypotheses.map((h) => h.id),
    count: hypotheses.length,
    competing: hypotheses.length > 1,
    notStated: survivors.slice(selected.length).map((f) => f.signal),
    ...(groups.length ? { merged: groups } : {}),
  });
  return hypotheses;
}
