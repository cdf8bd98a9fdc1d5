/**
 * Which columns of an eval log must `explore` not test as signals? The label
 * itself in another form (the scorer's own value, answer and explanation, the
 * metric's siblings, promptfoo's score: the importer names them), any column
 * that separates pass from fail perfectly on the exploration split (a leak
 * until shown otherwise: it would be "supported" and explain nothing), and
 * columns whose names are too long to report. Each exclusion is said with
 * its reason, as are columns holding non-finite numbers (read as missing).
 */
import { splitTable } from "./loop.ts";
import { selectRows, typeSignals, type CaseTable } from "./signals.ts";

/** Longest column name a report carries; a longer one is a problem of that column, not a crash at the end. */
export const MAX_COLUMN_NAME = 200;
/** Longest signal name (`column=level`): a category whose level is a long text is a problem of its column too. */
export const MAX_SIGNAL_NAME = 1000;

/** A column left out of the signals, or worth a word, and why. */
export interface ColumnNote {
  /** The columns it is about (several when they are left out for one reason). */
  readonly columns: readonly string[];
  /** `leak`: the label in another form; `column`: the column itself (its name, its values). */
  readonly what: "leak" | "column";
  readonly why: string;
}

export interface ExclusionOptions {
  /** Columns the importer says are the label or derived from it (`LabelSource.derived`). */
  readonly derived?: readonly string[];
  /** The label column, for messages. */
  readonly labelColumn?: string | null;
  /** The holdout the loop will make (same fraction, grouping and seed), to look at exploration cases only. */
  readonly holdout: number;
  readonly seed: number;
  /** Fewest cases of each class (among those with a value) before perfect separation counts as a leak. Default 3. */
  readonly minPerClass?: number;
}

function shortName(name: string): string {
  return name.length > 60 ? `${name.slice(0, 57)}…` : name;
}

/** Does this coded signal put every failure on one side and every pass on the other? */
function separates(
  values: Float64Array,
  failed: readonly boolean[],
  minPerClass: number,
): { fail: number; pass: number } | undefined {
  let fails = 0;
  let passes = 0;
  let failLo = Infinity;
  let failHi = -Infinity;
  let passLo = Infinity;
  let passHi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) continue;
    if (failed[i]) {
      fails++;
      failLo = Math.min(failLo, v);
      failHi = Math.max(failHi, v);
    } else {
      passes++;
      passLo = Math.min(passLo, v);
      passHi = Math.max(passHi, v);
    }
  }
  if (fails < minPerClass || passes < minPerClass) return undefined;
  return failHi < passLo || passHi < failLo ? { fail: fails, pass: passes } : undefined;
}

/**
 * The table without the columns `explore` must not test, and a note for each
 * column left out or worth a word. Looks only at exploration cases (the split
 * `runLoop` will make from the same holdout and seed) for perfect separation,
 * so the sealed split stays unread.
 *
 * Example: `excludeColumns(table, { derived: ["score.match"], labelColumn: "score.match", holdout: 0.4, seed: 1 })`
 * → `{ table: <without score.match>, notes: [{ columns: ["score.match"], what: "leak", why: "…" }] }`.
 */
export function excludeColumns(table: CaseTable, options: ExclusionOptions): { table: CaseTable; notes: ColumnNote[] } {
  const notes: ColumnNote[] = [];
  const out = new Set<string>();
  const derived = new Set(options.derived ?? []);
  const label = options.labelColumn ? `the label '${shortName(options.labelColumn)}'` : "the label";
  const fromLabel = [...table.columns.keys()].filter((c) => derived.has(c));
  for (const column of fromLabel) out.add(column);
  if (fromLabel.length)
    notes.push({
      columns: fromLabel,
      what: "leak",
      why:
        `not tested as signals, being ${label} or scored from the same answer: ` +
        fromLabel.map((c) => `'${shortName(c)}'`).join(", "),
    });
  for (const [column, values] of table.columns) {
    if (out.has(column)) continue;
    if (column.length > MAX_COLUMN_NAME) {
      out.add(column);
      notes.push({
        columns: [column],
        what: "column",
        why: `the column '${shortName(column)}' has a ${column.length}-character name (more than ${MAX_COLUMN_NAME}): not tested; rename it to test it`,
      });
      continue;
    }
    const nonFinite = values.filter((v) => typeof v === "number" && !Number.isFinite(v)).length;
    if (nonFinite)
      notes.push({
        columns: [column],
        what: "column",
        why: `'${shortName(column)}' holds ${nonFinite} non-finite number(s) (NaN or ±Infinity), read as missing`,
      });
  }
  const kept = (t: CaseTable): CaseTable => ({
    ...t,
    columns: new Map([...t.columns].filter(([c]) => !out.has(c))),
  });
  let rest = kept(table);
  const fraction = options.holdout;
  if (fraction > 0 && fraction < 1 && table.ids.length > 0) {
    const split = splitTable(rest, fraction, table.clusters ? "cluster" : "id", options.seed);
    const explore = selectRows(rest, split.explore);
    const leaks = new Map<string, { fail: number; pass: number; signal: string }>();
    const longLevels = new Set<string>();
    for (const signal of typeSignals(explore).signals) {
      if (signal.name.length > MAX_SIGNAL_NAME && !longLevels.has(signal.column)) {
        longLevels.add(signal.column);
        out.add(signal.column);
        notes.push({
          columns: [signal.column],
          what: "column",
          why: `'${shortName(signal.column)}' has a level ${signal.name.length - signal.column.length - 1} characters long (a text, not a category): not tested`,
        });
      }
      if (leaks.has(signal.column) || longLevels.has(signal.column)) continue;
      const hit = separates(signal.values, explore.failed, options.minPerClass ?? 3);
      if (hit) leaks.set(signal.column, { ...hit, signal: signal.name });
    }
    for (const [column, hit] of leaks) {
      out.add(column);
      notes.push({
        columns: [column],
        what: "leak",
        why:
          `'${shortName(hit.signal)}' separates pass from fail perfectly on the exploration split ` +
          `(all ${hit.fail} failures on one side, all ${hit.pass} passes on the other): likely the label in another form, so it is reported here and not tested`,
      });
    }
    if (leaks.size || longLevels.size) rest = kept(table);
  }
  return { table: rest, notes };
}
