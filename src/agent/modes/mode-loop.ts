/**
 * Failure modes inside the loop: found on the exploration split after M2,
 * logged (`modes.found`), turned into candidate hypotheses for M3 ("the case is
 * in mode k", a binary signal whose rule is fixed on the exploration split),
 * and placed on the sealed cases by that fixed rule only once M4 has opened
 * the sealed split. Nothing here reads a sealed signal or label before then.
 */
import { associate, type Association } from "../association.ts";
import type { Hypothesis } from "../diagnose.ts";
import type { EventLog } from "../events.ts";
import { codeValues, type CaseTable, type TypedSignal } from "../signals.ts";
import { failureModes, modeSignals, type FailureModeOptions, type FailureModes } from "./failure-modes.ts";

/** The column that holds each case's mode (`mode-1`, …, or `none`) in the loop's tables. */
export const MODE_COLUMN = "mode";

/** A case the fixed rule puts in no mode. */
export const NO_MODE = "none";

/** How one signal the modes were found on is coded, so sealed cases are read exactly as exploration ones. */
export interface ModeSignalCoding {
  readonly name: string;
  readonly column: string;
  readonly kind: TypedSignal["kind"];
  readonly level?: string;
}

/** The modes of a run's exploration split, what M3 gets from them, and how to place other cases. */
export interface LoopModes {
  readonly modes: FailureModes;
  /** The exploration table with the `mode` column added. */
  readonly explore: CaseTable;
  /** Each mode's association with failure on the exploration split (circular: the mode is drawn from these failures). */
  readonly associations: readonly Association[];
  readonly coding: readonly ModeSignalCoding[];
}

/**
 * Into which modes do the exploration failures fall? Runs `failureModes` on
 * the exploration table's typed signals, adds each case's mode as the
 * `mode` column (every exploration case placed by the same fixed rule,
 * `assignMode`, as a sealed case will be), and logs `modes.found`.
 *
 * @example
 * const found = findLoopModes(exploreTable, typed.signals, log, { seed: 1 });
 * found.explore.columns.get("mode") // ["mode-1", "none", "mode-2", …]
 */
export function findLoopModes(
  table: CaseTable,
  signals: readonly TypedSignal[],
  log: EventLog,
  options: FailureModeOptions & { readonly resamples?: number } = {},
): LoopModes {
  const seed = options.seed ?? 0;
  // The run's own label-like columns say nothing about how cases fail; the rest is what the run measured.
  const usable = signals.filter((s) => s.column !== MODE_COLUMN);
  const modes = failureModes(table, usable, { ...options, seed });
  const placedSignals = modeSignals(modes, usable);
  const n = table.ids.length;
  const column = Array.from({ length: n }, (_, i) => {
    const m = placedSignals.findIndex((s) => s.values[i] === 1);
    return m >= 0 ? modes.modes[m]!.id : NO_MODE;
  });
  const rows = table.ids.map((_, i) => i);
  const associations = placedSignals.map((s) =>
    associate("binary", s.values, table.failed, rows, {
      clusters: table.clusters,
      seed,
      resamples: options.resamples ?? 200,
    }),
  );
  const columns = new Map(table.columns);
  columns.set(MODE_COLUMN, column);
  const tags = new Map(table.tags ?? []);
  tags.set(MODE_COLUMN, ["failure-mode"]);
  const byName = new Map(usable.map((s) => [s.name, s]));
  const coding = modes.assignment.signals.map((name): ModeSignalCoding => {
    const s = byName.get(name)!;
    return { name, column: s.column, kind: s.kind, ...(s.level !== undefined ? { level: s.level } : {}) };
  });
  log.append("M2", "modes.found", {
    split: "exploration",
    method: modes.method,
    space: modes.space,
    contrast: modes.contrast,
    seed: modes.seed,
    k: modes.k,
    why: modes.why,
    criterion: modes.criterion,
    failing: modes.failing,
    passing: modes.passing,
    modes: modes.modes.map((mode, m) => {
      const a = associations[m]!;
      const inMode = rows.filter((i) => column[i] === mode.id);
      return {
        id: mode.id,
        size: mode.size,
        share: mode.share,
        defining: mode.defining,
        representatives: mode.representatives,
        caseIds: mode.caseIds.slice(0, 200),
        placed: { n: inMode.length, failures: inMode.filter((i) => table.failed[i]).length },
        exploreEffect: { name: a.effect.name, value: a.effect.value, nullValue: a.effect.nullValue },
        exploreP: a.p,
      };
    }),
    unused: modes.unused,
    assignment: modes.assignment,
    note: "found on the exploration split only; a mode's exploration association is circular (the mode is drawn from these failures), so only the sealed split, placed by the same fixed rule after the hypotheses are frozen, tests it",
  });
  return { modes, explore: { ...table, columns, tags }, associations, coding };
}

/**
 * The modes as M3's candidate hypotheses: "a case in mode k fails more often",
 * decided on the sealed split like any other. Their exploration evidence is
 * circular, so it sets neither their share of α (they take the least weight,
 * as a p-value of 1 would: `exploreP` is 1, `exploreUnit` "case") nor a
 * refutation margin (refuted when the sealed interval does not reach above the
 * null at all).
 *
 * @example modeHypotheses(found).map((h) => h.signal) // ["mode=mode-1", "mode=mode-2"]
 */
export function modeHypotheses(found: LoopModes): Omit<Hypothesis, "id">[] {
  const { modes, associations } = found;
  const byName = new Map(found.coding.map((c) => [c.name, c]));
  return modes.modes.map((mode, m) => {
    const a = associations[m]!;
    const effect = a.effect;
    const defining = mode.defining
      .map((d) => `${d.signal} ${d.effect > 0 ? "higher" : "lower"} (${d.effectName} ${d.effect.toFixed(2)})`)
      .join(", ");
    const tags = [
      "failure-mode",
      ...new Set(mode.defining.flatMap((d) => (byName.has(d.signal) ? tagsOfSignal(found, d.signal) : []))),
    ];
    return {
      signal: `${MODE_COLUMN}=${mode.id}`,
      column: MODE_COLUMN,
      kind: "binary",
      level: mode.id,
      mechanism: `failure mode ${mode.id} (${mode.size} of ${modes.failing} exploration failures): ${defining || "no signal sets it apart"}`,
      author: "rules",
      statement:
        `${MODE_COLUMN}=${mode.id}: failure more likely when a case is placed in ${mode.id} by the rule fixed on the exploration split ` +
        `(${effect.name} ${fmt(effect.value)} on exploration, circular — the mode is drawn from those failures — so it takes the least share of α and sets no refutation margin)`,
      direction: 1,
      directionText: "failure more likely when present",
      test: a.test,
      exploreEffect: {
        name: effect.name,
        value: effect.value,
        nullValue: effect.nullValue,
        lo: effect.interval.lo,
        hi: effect.interval.hi,
      },
      exploreN: a.n,
      exploreE: a.e,
      exploreP: 1,
      exploreUnit: "case",
      refuteMargin: 0,
      refutation: `REFUTED if, on the sealed split, the 95% interval of the ${effect.name} of cases placed in ${mode.id} does not reach above ${fmt(effect.nullValue)} (no margin: the exploration effect is circular); SUPPORTED needs the one-sided test upward with an e-value that survives e-BH at α over the hypotheses frozen`,
      tags,
    };
  });
}

function tagsOfSignal(found: LoopModes, signal: string): readonly string[] {
  const c = found.coding.find((x) => x.name === signal);
  return c ? (found.explore.tags?.get(c.column) ?? []) : [];
}

/**
 * The sealed table with each case's mode added, by the rule fixed on the
 * exploration split (`assignMode` over the same signal codings). Call it only
 * on a table `SealedSplit.open` returned: placing reads the sealed signals.
 * Logs `modes.placed` with the counts per mode.
 *
 * @example placeSealed(sealed.open("M4"), found, log).columns.get("mode") // ["none", "mode-1", …]
 */
export function placeSealed(table: CaseTable, found: LoopModes, log: EventLog): CaseTable {
  const signals: TypedSignal[] = found.coding.map((c) => {
    const column = table.columns.get(c.column);
    return {
      name: c.name,
      column: c.column,
      kind: c.kind,
      ...(c.level !== undefined ? { level: c.level } : {}),
      values: column ? codeValues(column, c.kind, c.level) : new Float64Array(table.ids.length).fill(Number.NaN),
      tags: [],
    };
  });
  const placed = modeSignals(found.modes, signals);
  const column = table.ids.map((_, i) => {
    const m = placed.findIndex((s) => s.values[i] === 1);
    return m >= 0 ? found.modes.modes[m]!.id : NO_MODE;
  });
  const columns = new Map(table.columns);
  columns.set(MODE_COLUMN, column);
  log.append("M4", "modes.placed", {
    split: "sealed",
    n: table.ids.length,
    modes: found.modes.modes.map((mode) => {
      const rows = column.map((c, i) => (c === mode.id ? i : -1)).filter((i) => i >= 0);
      return { id: mode.id, n: rows.length, failures: rows.filter((i) => table.failed[i]).length };
    }),
    none: column.filter((c) => c === NO_MODE).length,
  });
  return { ...table, columns };
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toFixed(3) : String(x);
}

/**
 * How far each case of `table` lies from mode `m`'s centre, in the space the
 * modes were found in (NaN for cases the fixed rule does not put in that
 * mode, and for passing cases): the failing cases nearest it show the mode best.
 *
 * @example modeDistances(found.explore, found, 0) // Float64Array [0.41, NaN, 1.2, …]
 */
export function modeDistances(table: CaseTable, found: LoopModes, m: number): Float64Array {
  const { centers, scales, weights, centroids } = found.modes.assignment;
  const centre = centroids[m]!;
  const mode = found.modes.modes[m]!;
  const placed = table.columns.get(MODE_COLUMN);
  const coded = found.coding.map((c) => {
    const column = table.columns.get(c.column);
    return column ? codeValues(column, c.kind, c.level) : new Float64Array(table.ids.length).fill(Number.NaN);
  });
  return Float64Array.from(table.ids, (_, i) => {
    if (!table.failed[i] || placed?.[i] !== mode.id) return Number.NaN;
    let sum = 0;
    coded.forEach((values, c) => {
      const v = values[i]!;
      const x = Number.isFinite(v) ? (weights[c]! * (v - centers[c]!)) / scales[c]! : 0;
      sum += (x - centre[c]!) ** 2;
    });
    return Math.sqrt(sum);
  });
}
