/**
 * Which signals are the same measurement? Two analyzers can report one
 * quantity under two names (the final state's answer probability from the
 * logit lens and the answer's log-probability), or one column can be a
 * monotone function of another (a log, a rescaling, a complement). Tested
 * separately they give one finding twice — identical AUCs, identical
 * verdicts — and count as two hypotheses. M3 merges them into one.
 */
import { typeSignals, type CaseTable } from "./signals.ts";

/** How a merged signal relates to the one kept. */
export type SameMeasurement = "identical" | "same order" | "reversed order";

/** One signal's values over the same cases (NaN = missing). */
export interface MeasuredSignal {
  readonly name: string;
  readonly values: ArrayLike<number>;
}

/** A group of signals that are one measurement: the first is kept, the others merged into it. */
export interface MeasurementGroup {
  readonly kept: string;
  readonly merged: readonly { readonly signal: string; readonly relation: SameMeasurement }[];
}

/** Dense ranks of the present values (ties share a rank), with missing values as −1. */
function denseRanks(values: ArrayLike<number>): Int32Array {
  const order = Array.from({ length: values.length }, (_, i) => i)
    .filter((i) => !Number.isNaN(values[i]!))
    .sort((a, b) => values[a]! - values[b]!);
  const ranks = new Int32Array(values.length).fill(-1);
  let rank = -1;
  let previous = Number.NaN;
  for (const i of order) {
    if (values[i] !== previous) rank++;
    ranks[i] = rank;
    previous = values[i]!;
  }
  return ranks;
}

/**
 * Groups signals that are the same measurement on these cases: identical
 * values, or one a strictly monotone function of the other (the same order
 * of cases, ties included, up or down), with the same cases missing.
 * Constant signals are never grouped (they order nothing). Signals keep the
 * order given: the first of a group is the one kept. Runs in O(k · n log n).
 *
 * @example sameMeasurementGroups([{ name: "p", values: [0.1, 0.5, 0.9] }, { name: "logp", values: [-2.3, -0.69, -0.1] }])
 *   // [{ kept: "p", merged: [{ signal: "logp", relation: "same order" }] }]
 */
export function sameMeasurementGroups(signals: readonly MeasuredSignal[]): MeasurementGroup[] {
  const groups = new Map<string, { kept: MeasuredSignal; merged: MeasurementGroup["merged"][number][] }>();
  const out: { kept: MeasuredSignal; merged: MeasurementGroup["merged"][number][] }[] = [];
  for (const signal of signals) {
    if (typeof signal?.name !== "string" || !signal.values || typeof signal.values.length !== "number")
      throw new TypeError("sameMeasurementGroups(): each signal must be { name: string, values: numbers }");
    const ranks = denseRanks(signal.values);
    let top = -1;
    for (const r of ranks) if (r > top) top = r;
    if (top < 1) continue; // constant or empty: orders nothing, so it is nobody's twin
    const up = ranks.join(",");
    const down = Array.from(ranks, (r) => (r < 0 ? -1 : top - r)).join(",");
    // One key per order, whichever way it runs: the smaller of the two spellings.
    const key = up < down ? up : down;
    const group = groups.get(key);
    if (!group) {
      const created = { kept: signal, merged: [] };
      groups.set(key, created);
      out.push(created);
      continue;
    }
    const keptRanks = denseRanks(group.kept.values).join(",");
    const identical = Array.from(signal.values).every((v, i) => Object.is(v, group.kept.values[i]));
    group.merged.push({
      signal: signal.name,
      relation: identical ? "identical" : keptRanks === up ? "same order" : "reversed order",
    });
  }
  return out.filter((g) => g.merged.length > 0).map((g) => ({ kept: g.kept.name, merged: g.merged }));
}

/**
 * The relation in words, as the report prints it.
 *
 * @example mergeNote({ signal: "logprob.answer", relation: "same order" }) // "logprob.answer (orders the cases the same way)"
 */
export function mergeNote(merged: { readonly signal: string; readonly relation: SameMeasurement }): string {
  const how =
    merged.relation === "identical"
      ? "identical values"
      : merged.relation === "same order"
        ? "orders the cases the same way"
        : "orders the cases the reverse way";
  return `${merged.signal} (${how})`;
}

/**
 * Each testable signal's coded values on `table` (the exploration split), by
 * name: what M3 compares to find the same measurement twice.
 *
 * @example signalValues(exploreTable).get("logprob.answer") // Float64Array of the exploration cases' values
 */
export function signalValues(table: CaseTable): Map<string, Float64Array> {
  return new Map(typeSignals(table).signals.map((s) => [s.name, s.values]));
}
