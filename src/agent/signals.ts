/**
 * Per-case signals and how each is typed for testing. A signal is one column
 * of values, one per case (an eval-log column, or an analyzer's per-case
 * output); its type decides which association test M2 runs on it.
 */

/** A plain table of cases: ids, the failure label, optional clusters, and candidate signal columns. */
export interface CaseTable {
  readonly ids: readonly string[];
  /** true = the case failed. */
  readonly failed: readonly boolean[];
  /** Cases in one cluster are not independent (e.g. several questions on one image). */
  readonly clusters?: readonly string[];
  readonly columns: ReadonlyMap<string, readonly unknown[]>;
  /** Free-form tags per column (e.g. the analyzer that produced it), used by protocol hints. */
  readonly tags?: ReadonlyMap<string, readonly string[]>;
}

export type SignalKind = "binary" | "numeric" | "ordinal";

/** A signal ready for a test: numeric codes per case (NaN = missing). */
export interface TypedSignal {
  /** The signal's name; one-vs-rest levels of a categorical column are named `column=level`. */
  readonly name: string;
  /** The column it came from. */
  readonly column: string;
  readonly kind: SignalKind;
  /** Binary: 1 where the case has `level`, 0 otherwise; numeric/ordinal: the value. NaN = missing. */
  readonly values: Float64Array;
  /** Binary signals: the level coded 1. */
  readonly level?: string;
  readonly tags: readonly string[];
}

/** A column that could not be tested, and why (shown in the report). */
export interface Untestable {
  readonly name: string;
  readonly reason: string;
}

export interface TypingOptions {
  /** Integer columns with at most this many distinct values are ordinal (rank-tested). Default 10. */
  readonly maxOrdinalLevels?: number;
  /** Text columns with at most this many levels are split into one-vs-rest binary signals. Default 12. */
  readonly maxCategoricalLevels?: number;
  /** A binary level (or categorical level) seen fewer times than this is not tested. Default 5. */
  readonly minLevelCount?: number;
}

const TRUE_WORDS = new Set(["true", "yes", "y", "1", "t"]);

function isMissing(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    (typeof value === "number" && !Number.isFinite(value)) ||
    (typeof value === "string" && value.trim() === "")
  );
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "boolean") return undefined;
  if (typeof value === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

function levelKey(value: unknown): string {
  return typeof value === "string" ? value.trim() : String(value);
}

/**
 * The numeric codes of a column for a signal of `kind`, the one coding M2 and
 * M4 share so a sealed case is read exactly as an exploration case was:
 * binary → 1 where the value is `level`, else 0; numeric/ordinal → the number.
 * Missing or non-numeric values are NaN.
 *
 * Example: `codeValues(["yes", "no", ""], "binary", "yes")` → `[1, 0, NaN]`;
 * `codeValues([0.5, "2", "x"], "numeric")` → `[0.5, 2, NaN]`.
 */
export function codeValues(values: readonly unknown[], kind: SignalKind, level?: string): Float64Array {
  return kind === "binary"
    ? Float64Array.from(values, (v) => (isMissing(v) ? NaN : levelKey(v) === level ? 1 : 0))
    : Float64Array.from(values, (v) => (isMissing(v) ? NaN : (asNumber(v) ?? NaN)));
}

/**
 * Which test a column gets, or why it gets none.
 *
 * Rules, in order: a column of arrays/objects is not a scalar; fewer than two
 * distinct non-missing values is constant; two distinct values is binary (the
 * level coded 1 is `true`/`yes`/`1` when present, else the rarer level);
 * numbers: integers where every value differs are identifiers, integers with
 * at most `maxOrdinalLevels` levels are ordinal, anything else numeric (floats
 * that all differ are ordinary measurements, not identifiers); text where every
 * value differs is an identifier; text with few levels becomes one binary
 * signal per level with at least `minLevelCount` cases; other text is free text.
 *
 * Example: `typeSignal("share", [0.1, 0.4, 0.2, 0.3])` → one numeric signal;
 * `typeSignal("row", [1, 2, …, 40])` → untestable ("identifier: every value is a distinct integer").
 */
export function typeSignal(
  column: string,
  values: readonly unknown[],
  tags: readonly string[] = [],
  options: TypingOptions = {},
): { signals: TypedSignal[]; untestable: Untestable[] } {
  const maxOrdinal = options.maxOrdinalLevels ?? 10;
  const maxCategorical = options.maxCategoricalLevels ?? 12;
  const minCount = options.minLevelCount ?? 5;
  const present = values.filter((v) => !isMissing(v));
  const none = (reason: string) => ({ signals: [], untestable: [{ name: column, reason }] });
  if (present.length === 0) return none("every value is missing");
  if (present.some((v) => typeof v === "object")) return none("values are lists or objects, not one value per case");
  const counts = new Map<string, number>();
  for (const v of present) counts.set(levelKey(v), (counts.get(levelKey(v)) ?? 0) + 1);
  if (counts.size < 2) return none(`constant: every case has the value '${[...counts.keys()][0]}'`);

  const numeric = present.map(asNumber);
  const allNumeric = numeric.every((x) => x !== undefined) && present.every((v) => typeof v !== "boolean");
  const allDistinct = counts.size === present.length;

  if (counts.size === 2) {
    const levels = [...counts.keys()];
    const truthy = levels.find((l) => TRUE_WORDS.has(l.toLowerCase()));
    const level =
      truthy ?? [...levels].sort((a, b) => counts.get(a)! - counts.get(b)! || (a < b ? 1 : a > b ? -1 : 0))[0]!;
    const other = levels.find((l) => l !== level)!;
    if (Math.min(counts.get(level)!, counts.get(other)!) < minCount)
      return none(
        `binary but '${counts.get(level)! < counts.get(other)! ? level : other}' occurs in fewer than ${minCount} cases`,
      );
    return {
      signals: [
        {
          name: column,
          column,
          kind: "binary",
          level,
          tags,
          values: codeValues(values, "binary", level),
        },
      ],
      untestable: [],
    };
  }

  if (allNumeric) {
    const integers = (numeric as number[]).every((x) => Number.isInteger(x));
    if (integers && allDistinct && present.length > maxOrdinal)
      return none("identifier: every value is a distinct integer (an id or row number, not a signal)");
    const kind: SignalKind = integers && counts.size <= maxOrdinal ? "ordinal" : "numeric";
    return {
      signals: [
        {
          name: column,
          column,
          kind,
          tags,
          values: codeValues(values, kind),
        },
      ],
      untestable: [],
    };
  }

  if (allDistinct) return none("identifier: every value is distinct");
  if (counts.size > maxCategorical)
    return none(`free text or high-cardinality category (${counts.size} levels > ${maxCategorical})`);
  const signals: TypedSignal[] = [];
  const untestable: Untestable[] = [];
  for (const [level, count] of [...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const name = `${column}=${level}`;
    if (count < minCount || present.length - count < minCount) {
      untestable.push({ name, reason: `level occurs in ${count} of ${present.length} cases (fewer than ${minCount})` });
      continue;
    }
    signals.push({
      name,
      column,
      kind: "binary",
      level,
      tags,
      values: codeValues(values, "binary", level),
    });
  }
  return { signals, untestable };
}

/** Types every column of `table`; see `typeSignal` for the rules. */
export function typeSignals(
  table: CaseTable,
  options: TypingOptions = {},
): { signals: TypedSignal[]; untestable: Untestable[] } {
  const signals: TypedSignal[] = [];
  const untestable: Untestable[] = [];
  for (const [column, values] of table.columns) {
    if (values.length !== table.ids.length)
      throw new Error(`typeSignals(): column '${column}' has ${values.length} values for ${table.ids.length} cases`);
    const typed = typeSignal(column, values, table.tags?.get(column) ?? [], options);
    signals.push(...typed.signals);
    untestable.push(...typed.untestable);
  }
  return { signals, untestable };
}

/** The rows of `table` at `indices`, as a new table (columns copied). */
export function selectRows(table: CaseTable, indices: readonly number[]): CaseTable {
  const pick = <T>(xs: readonly T[]) => indices.map((i) => xs[i]!);
  const columns = new Map<string, unknown[]>();
  for (const [name, values] of table.columns)
    columns.set(
      name,
      indices.map((i) => values[i]),
    );
  return {
    ids: pick(table.ids),
    failed: pick(table.failed),
    clusters: table.clusters ? pick(table.clusters) : undefined,
    columns,
    tags: table.tags,
  };
}
