/**
 * M2 explore: every signal against failure, on the exploration split only,
 * then e-BH over everything tried. Also the figures' data: each signal's
 * distribution by label and its effect with an interval.
 */
import { eBH } from "../stats/index.ts";
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
  /** Survived e-BH at α over every signal tried. */
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

export interface ExploreOptions {
  readonly alpha: number;
  readonly seed: number;
  readonly resamples?: number;
  readonly calibrator?: Calibrator;
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
 * Which signals are associated with failure on the exploration split?
 * Runs each signal's test, logs one `signal.tested` event per signal, then
 * e-BH at `alpha` over all of them (`signals.selected`).
 *
 * Example: `explore(exploreTable, signals, untestable, log, { alpha: 0.05, seed: 1 })`
 * → findings with `selected: true` for the signals that survive e-BH.
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
  const testable = tested.filter((t) => !t.association.untestable);
  const rejected = new Set(
    testable.length
      ? eBH(
          testable.map((t) => t.association.e),
          options.alpha,
        ).map((k) => testable[k]!.signal.name)
      : [],
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
    procedure: "e-BH (Wang & Ramdas 2022) over every signal tested",
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
