/**
 * M2 explore: every signal against failure, on the exploration split only,
 * then a stated screen that picks the few signals M3 turns into hypotheses
 * (selection only: nothing is claimed on the exploration split; M4 decides on
 * the sealed one). Also the figures' data: each signal's distribution by label
 * and its effect with an interval.
 */
import { associate, type Association } from "./association.ts";
import type { Calibrator } from "./evalue.ts";
import type { EventLog } from "./events.ts";
import type { CaseTable, TypedSignal, Untestable } from "./signals.ts";

/** What M2 found for one signal. */
export interface SignalFinding {
  readonly signal: string;
  readonly column: string;
  readonly kind: TypedSignal["kind"];
  readonly level?: string;
  readonly tags: readonly string[];
  readonly association: Association;
  /** Passed the screen (see `ScreenRule`): it becomes a hypothesis M4 decides. */
  readonly selected: boolean;
  readonly figure: SignalFigure;
}

/** Data for one signal's figure: histogram (numeric/ordinal) or 2×2 counts (binary), by label. */
export type SignalFigure =
  | {
      readonly type: "histogram";
      readonly edges: readonly number[];
      readonly fail: readonly number[];
      readonly pass: readonly number[];
    }
  | {
      readonly type: "counts";
      /** [failures, cases] with the signal, and without it. */
      readonly withSignal: readonly [number, number];
      readonly without: readonly [number, number];
    };

/** Which exploration results go on to M3/M4: a selection rule, tunable, that makes no claim. */
export interface ScreenRule {
  /** Screened in when the exploration p-value (two-sided) is at most this. */
  readonly maxP: number;
  /** At most this many go on, smallest p first: M4 shares α among exactly these. */
  readonly maxSelected: number;
}

/** The default screen: p ≤ 0.05 on the exploration split, at most 5 signals. */
export const DEFAULT_SCREEN: ScreenRule = { maxP: 0.05, maxSelected: 5 };

/** A screen with the defaults filled in, checked. */
export function screenRule(screen: Partial<ScreenRule> = {}): ScreenRule {
  const rule = { ...DEFAULT_SCREEN, ...screen };
  if (!(rule.maxP > 0 && rule.maxP <= 1))
    throw new RangeError(`screen maxP ${rule.maxP} must lie in (0, 1]; e.g. 0.05`);
  if (!Number.isInteger(rule.maxSelected) || rule.maxSelected < 1)
    throw new RangeError(`screen maxSelected ${rule.maxSelected} must be a whole number ≥ 1; e.g. 5`);
  return rule;
}

/** The screen in words, as the report states it. */
export function describeScreen(rule: ScreenRule): string {
  return `screen on the exploration split: p ≤ ${rule.maxP} (two-sided), at most ${rule.maxSelected} signals with the smallest p; selection only, no claim is made here — M4 decides each on the sealed split`;
}

export interface ExploreOptions {
  readonly alpha: number;
  readonly seed: number;
  readonly resamples?: number;
  readonly calibrator?: Calibrator;
  readonly screen?: Partial<ScreenRule>;
}

/** Histogram edges shared by both labels: `bins` equal-width bins over the observed range (ordinal: one per level). */
export function figureOf(signal: TypedSignal, table: CaseTable, bins = 12): SignalFigure {
  const rows = table.ids.map((_, i) => i).filter((i) => !Number.isNaN(signal.values[i]!));
  if (signal.kind === "binary") {
    const count = (has: number) => {
      const r = rows.filter((i) => signal.values[i] === has);
      return [r.filter((i) => table.failed[i]).length, r.length] as [number, number];
    };
    return { type: "counts", withSignal: count(1), without: count(0) };
  }
  const values = rows.map((i) => signal.values[i]!);
  let edges: number[];
  if (signal.kind === "ordinal") {
    const levels = [...new Set(values)].sort((a, b) => a - b);
    edges = [...levels.map((l) => l - 0.5), levels[levels.length - 1]! + 0.5];
  } else {
    const lo = Math.min(...values),
      hi = Math.max(...values);
    const width = (hi - lo) / bins || 1;
    edges = Array.from({ length: bins + 1 }, (_, k) => lo + k * width);
  }
  const fail = new Array<number>(edges.length - 1).fill(0);
  const pass = new Array<number>(edges.length - 1).fill(0);
  for (const i of rows) {
    const v = signal.values[i]!;
    let k = edges.findIndex((_, j) => j < edges.length - 1 && v < edges[j + 1]!);
    if (k < 0) k = edges.length - 2;
    (table.failed[i] ? fail : pass)[k]!++;
  }
  return { type: "histogram", edges, fail, pass };
}

/**
 * Which signals look associated with failure on the exploration split?
 * Runs each signal's test (cluster-aware when cases share clusters), logs one
 * `signal.tested` event per signal, then the screen (`signals.selected`).
 *
 * Example: `explore(exploreTable, signals, untestable, log, { alpha: 0.05, seed: 1 })`
 * → findings with `selected: true` for the signals that pass the screen.
 */
export function explore(
  table: CaseTable,
  signals: readonly TypedSignal[],
  untestable: readonly Untestable[],
  log: EventLog,
  options: ExploreOptions,
): SignalFinding[] {
  const rows = table.ids.map((_, i) => i);
  const tested: { signal: TypedSignal; association: Association }[] = [];
  for (const signal of signals) {
    const association = associate(signal.kind, signal.values, table.failed, rows, {
      clusters: table.clusters,
      seed: options.seed,
      resamples: options.resamples ?? 400,
      ...(options.calibrator ? { calibrator: options.calibrator } : {}),
    });
    tested.push({ signal, association });
  }
  const rule = screenRule(options.screen);
  const testable = tested.filter((t) => !t.association.untestable);
  const rejected = new Set(
    testable
      .filter((t) => t.association.p <= rule.maxP && t.association.observedDirection !== 0)
      .sort(
        (a, b) =>
          a.association.p - b.association.p ||
          b.association.e - a.association.e ||
          (a.signal.name < b.signal.name ? -1 : 1),
      )
      .slice(0, rule.maxSelected)
      .map((t) => t.signal.name),
  );
  const findings = tested.map(({ signal, association }) => ({
    signal: signal.name,
    column: signal.column,
    kind: signal.kind,
    level: signal.level,
    tags: signal.tags,
    association,
    selected: rejected.has(signal.name),
    figure: figureOf(signal, table),
  }));
  for (const f of findings) log.append("M2", "signal.tested", { ...f });
  log.append("M2", "signals.selected", {
    alpha: options.alpha,
    procedure: describeScreen(rule),
    screen: rule,
    tried: testable.length,
    untestable: [
      ...untestable,
      ...tested
        .filter((t) => t.association.untestable)
        .map((t) => ({ name: t.signal.name, reason: t.association.untestable! })),
    ],
    selected: findings.filter((f) => f.selected).map((f) => f.signal),
  });
  return findings;
}
