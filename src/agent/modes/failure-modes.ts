import type { CaseTable, TypedSignal } from "../signals.ts";
import { gapStatistic, type GapRow } from "./gap-statistic.ts";
import { squaredDistance, type KMeansResult } from "./kmeans.ts";
import { silhouette } from "./silhouette.ts";

/**
 * `failure-aware` (default): each signal is measured from what passing cases
 * look like (centred and scaled by the passing cases) and weighted by how far
 * failing and passing cases differ on it (|Hedges' g|, at most 3), so signals
 * unrelated to failure do not drive the grouping. `plain`: standardized over
 * all cases, equal weights.
 */
export type ModeSpace = "failure-aware" | "plain";

/**
 * What a mode's defining signals are measured against: `passing` (default) all
 * passing cases; `boundary` the passing cases nearest the mode (as many as the
 * mode has cases), so a mode is described by what separates it from the
 * passing cases that look most like it, and its representatives are the
 * failing cases nearest those passing ones.
 */
export type ModeContrast = "passing" | "boundary";

export interface FailureModeOptions {
  /** Default 0: the same seed gives the same modes in Node and the page. */
  readonly seed?: number;
  /** The most modes considered. Default 6. */
  readonly maxModes?: number;
  readonly space?: ModeSpace;
  readonly contrast?: ModeContrast;
  /** A mode has at least this many failing cases. Default 5. */
  readonly minModeSize?: number;
  /** Representative cases per mode. Default 3. */
  readonly representatives?: number;
  /** Defining signals listed per mode. Default 3. */
  readonly definingSignals?: number;
  /** Reference data sets of the gap statistic. Default 20. */
  readonly references?: number;
}

/** One signal that sets a mode apart, with its effect size. */
export interface DefiningSignal {
  readonly signal: string;
  readonly kind: TypedSignal["kind"];
  /** Mean of the signal over the mode's cases (a proportion for binary signals). */
  readonly modeMean: number;
  /** Mean over the contrast cases (passing, or the boundary passing cases). */
  readonly contrastMean: number;
  /** Hedges' g (numeric, ordinal) or Cohen's h (binary): mode minus contrast. */
  readonly effect: number;
  readonly effectName: "Hedges' g" | "Cohen's h";
}

export interface FailureMode {
  /** `mode-1`, `mode-2`, … largest first. */
  readonly id: string;
  readonly size: number;
  /** Its share of the failing cases. */
  readonly share: number;
  readonly caseIds: readonly string[];
  /** Largest |effect| first. */
  readonly defining: readonly DefiningSignal[];
  /** The cases that show the mode best (nearest its centre; with `boundary`, nearest the passing cases). */
  readonly representatives: readonly string[];
}

/** The fixed rule that places any case (an exploration or a sealed one) in a mode, or in none. */
export interface ModeAssignment {
  readonly signals: readonly string[];
  readonly centers: readonly number[];
  readonly scales: readonly number[];
  readonly weights: readonly number[];
  /** One centroid per mode, in the weighted space, in mode order. */
  readonly centroids: readonly (readonly number[])[];
  /** The passing cases' centroid: a case nearer it than to every mode is in no mode. */
  readonly passingCentroid: readonly number[];
}

export interface ModeCriterionRow extends GapRow {
  /** Mean silhouette of the k-means fit at this k (k ≥ 2). */
  readonly silhouette?: number;
  /** Size of its smallest group. */
  readonly smallest: number;
}

export interface FailureModes {
  /** The method in words, for the report. */
  readonly method: string;
  readonly space: ModeSpace;
  readonly contrast: ModeContrast;
  readonly seed: number;
  /** The number of modes found (1: the failures form one mode). */
  readonly k: number;
  /** Why this k: the gap statistic's rule, and any step down for a mode under `minModeSize`. */
  readonly why: string;
  readonly criterion: readonly ModeCriterionRow[];
  readonly failing: number;
  readonly passing: number;
  readonly modes: readonly FailureMode[];
  /** Signals left out of the grouping, with the reason. */
  readonly unused: readonly { readonly signal: string; readonly reason: string }[];
  readonly assignment: ModeAssignment;
}

/** Under this mean silhouette, groups are "no substantial structure" (Kaufman & Rousseeuw 1990): one mode. */
const MIN_SILHOUETTE = 0.25;

/** Silhouette is O(n²): past this many failing cases it is computed on a seeded subsample. */
const SILHOUETTE_CAP = 1500;

/**
 * Into which distinct ways do these cases fail? Groups the failing cases of a
 * table (the exploration split: modes are chosen there so the sealed split stays
 * sealed) by their signals, with k-means++ in a failure-aware space and the
 * number of modes chosen by the gap statistic (one mode included) and
 * reported with each k's silhouette; for each mode, its size, the signals that
 * set it apart from passing cases (effect sizes) and its representative cases.
 *
 * @example
 * // 30 cases failing with a low `imageShare`, 30 with a high `entropy`, 140 passing:
 * failureModes(table, signals).modes.map((m) => m.defining[0]!.signal) // ["imageShare", "entropy"]
 */
export function failureModes(
  table: CaseTable,
  signals: readonly TypedSignal[],
  options: FailureModeOptions = {},
): FailureModes {
  const n = table.ids.length;
  const space = options.space ?? "failure-aware";
  const contrast = options.contrast ?? "passing";
  const seed = options.seed ?? 0;
  const maxModes = options.maxModes ?? 6;
  const minModeSize = options.minModeSize ?? 5;
  if (!Number.isInteger(maxModes) || maxModes < 1)
    throw new RangeError(`failureModes(): maxModes must be a positive integer, got ${maxModes}`);
  if (!Number.isInteger(minModeSize) || minModeSize < 1)
    throw new RangeError(`failureModes(): minModeSize must be a positive integer, got ${minModeSize}`);
  if (table.failed.length !== n)
    throw new RangeError(`failureModes(): the table has ${n} ids but ${table.failed.length} failure labels`);
  for (const s of signals)
    if (s.values.length !== n)
      throw new RangeError(`failureModes(): signal '${s.name}' has ${s.values.length} values for ${n} cases`);
  const failingRows: number[] = [];
  const passingRows: number[] = [];
  table.failed.forEach((f, i) => (f ? failingRows : passingRows).push(i));
  if (failingRows.length === 0) throw new RangeError("failureModes(): no case failed, so there are no failure modes");

  const unused: { signal: string; reason: string }[] = [];
  const used: { signal: TypedSignal; center: number; scale: number; weight: number }[] = [];
  for (const signal of signals) {
    const all = stats(signal.values, allRows(n));
    if (all.count < 2 || all.sd === 0) {
      unused.push({ signal: signal.name, reason: all.count < 2 ? "fewer than 2 cases have it" : "constant" });
      continue;
    }
    if (space === "plain") {
      used.push({ signal, center: all.mean, scale: all.sd, weight: 1 });
      continue;
    }
    const pass = stats(signal.values, passingRows);
    const fail = stats(signal.values, failingRows);
    const scale = pass.count >= 2 && pass.sd > 0 ? pass.sd : all.sd;
    const g = fail.count >= 2 && pass.count >= 2 ? hedgesG(fail, pass) : 0;
    used.push({ signal, center: pass.count > 0 ? pass.mean : all.mean, scale, weight: Math.min(Math.abs(g), 3) });
  }
  const d = used.length;
  const assignmentBase = {
    signals: used.map((u) => u.signal.name),
    centers: used.map((u) => u.center),
    scales: used.map((u) => u.scale),
    weights: used.map((u) => u.weight),
  };
  const embed = (rows: readonly number[]): Float64Array => {
    const out = new Float64Array(rows.length * Math.max(d, 1));
    rows.forEach((row, i) =>
      used.forEach((u, c) => {
        const v = u.signal.values[row]!;
        out[i * d + c] = Number.isNaN(v) ? 0 : (u.weight * (v - u.center)) / u.scale;
      }),
    );
    return out;
  };
  const failing = embed(failingRows);
  const passing = embed(passingRows);
  const base = {
    space,
    contrast,
    seed,
    failing: failingRows.length,
    passing: passingRows.length,
    unused,
  };
  const method = describeMethod(space, d, seed, options.references ?? 20, maxModes, minModeSize);
  const finish = (fit: KMeansResult, why: string, criterion: ModeCriterionRow[]): FailureModes => ({
    ...base,
    method,
    k: fit.k,
    why,
    criterion,
    ...describeModes(table, fit, failingRows, passingRows, failing, passing, d, used, assignmentBase, options),
  });

  const top = Math.min(maxModes, Math.floor(failingRows.length / minModeSize));
  if (d === 0 || top < 2) {
    const why =
      d === 0
        ? "one mode: no signal varies, so there is nothing to group by"
        : `one mode: ${failingRows.length} failing case(s) cannot form two modes of at least ${minModeSize}`;
    return finish(singleGroup(failing, failingRows.length, d), why, []);
  }

  const points = { values: failing, d };
  const gap = gapStatistic(points, top, { seed, references: options.references ?? 20 });
  const sample = silhouetteSample(failingRows.length, seed);
  const criterion: ModeCriterionRow[] = gap.rows.map((row, i) => {
    const fit = gap.fits[i]!;
    const smallest = Math.min(...groupSizes(fit));
    return row.k === 1
      ? { ...row, smallest }
      : { ...row, smallest, silhouette: silhouetteOf(points, fit.assignments, sample) };
  });
  let k = gap.k;
  let why = `${k} mode(s): the gap statistic's 1-SE rule (the smallest k with Gap(k) ≥ Gap(k+1) − s(k+1))`;
  while (k > 1 && criterion[k - 1]!.smallest < minModeSize) k--;
  if (k !== gap.k)
    why += `; the gap chose ${gap.k}, stepped down to ${k} so that every mode has at least ${minModeSize} failing cases`;
  const structure = k > 1 ? criterion[k - 1]!.silhouette! : undefined;
  if (structure !== undefined && structure < MIN_SILHOUETTE) {
    why += `; but their mean silhouette is ${structure.toFixed(2)}, under ${MIN_SILHOUETTE} (no substantial structure, Kaufman & Rousseeuw), so one mode`;
    k = 1;
  }
  return finish(k === 1 ? singleGroup(failing, failingRows.length, d) : gap.fits[k - 1]!, why, criterion);
}

type Used = { signal: TypedSignal; center: number; scale: number; weight: number };

/** All failing cases as one group, centred on their mean. */
function singleGroup(failing: Float64Array, count: number, d: number): KMeansResult {
  const centroids = new Float64Array(Math.max(d, 1));
  for (let i = 0; i < count; i++) for (let c = 0; c < d; c++) centroids[c]! += failing[i * d + c]! / count;
  return { k: 1, assignments: new Int32Array(count), centroids, inertia: 0 };
}

function describeModes(
  table: CaseTable,
  fit: KMeansResult,
  failingRows: number[],
  passingRows: number[],
  failing: Float64Array,
  passing: Float64Array,
  d: number,
  used: Used[],
  assignmentBase: Omit<ModeAssignment, "centroids" | "passingCentroid">,
  options: FailureModeOptions,
): { modes: FailureMode[]; assignment: ModeAssignment } {
  const contrast = options.contrast ?? "passing";
  const representatives = options.representatives ?? 3;
  const definingCount = options.definingSignals ?? 3;
  // Largest mode first; ties by first appearance.
  const sizes = groupSizes(fit);
  const order = Array.from({ length: fit.k }, (_, g) => g).sort((a, b) => sizes[b]! - sizes[a]! || a - b);
  const passingCentroid = new Array<number>(d).fill(0);
  for (let i = 0; i < passingRows.length; i++)
    for (let c = 0; c < d; c++) passingCentroid[c]! += passing[i * d + c]! / passingRows.length;
  const modes = order.map((group, index): FailureMode => {
    const members: number[] = [];
    fit.assignments.forEach((g, i) => g === group && members.push(i));
    const memberRows = members.map((i) => failingRows[i]!);
    let contrastRows = passingRows;
    let near: number[];
    if (contrast === "boundary" && passingRows.length > 0) {
      const closest = passingRows
        .map((row, i) => ({ row, dist: squaredDistance(passing, i, fit.centroids, group, d) }))
        .sort((a, b) => a.dist - b.dist || a.row - b.row)
        .slice(0, Math.min(members.length, passingRows.length));
      contrastRows = closest.map((c) => c.row);
      const border = closest.map((c) => passingRows.indexOf(c.row));
      near = [...members].sort(
        (a, b) => nearestOf(failing, a, passing, border, d) - nearestOf(failing, b, passing, border, d) || a - b,
      );
    } else {
      near = [...members].sort(
        (a, b) =>
          squaredDistance(failing, a, fit.centroids, group, d) - squaredDistance(failing, b, fit.centroids, group, d) ||
          a - b,
      );
    }
    const defining = used
      .map(({ signal }) => definingSignal(signal, memberRows, contrastRows))
      .filter((s): s is DefiningSignal => s !== undefined)
      .sort((a, b) => Math.abs(b.effect) - Math.abs(a.effect) || (a.signal < b.signal ? -1 : 1))
      .slice(0, definingCount);
    return {
      id: `mode-${index + 1}`,
      size: members.length,
      share: members.length / failingRows.length,
      caseIds: memberRows.map((row) => table.ids[row]!),
      defining,
      representatives: near.slice(0, representatives).map((i) => table.ids[failingRows[i]!]!),
    };
  });
  const centroids = order.map((group) => Array.from(fit.centroids.subarray(group * d, group * d + d)));
  return { modes, assignment: { ...assignmentBase, centroids, passingCentroid } };
}

/**
 * Which mode is this case in, by the rule fixed on the exploration split? The
 * index of the nearest mode centroid, or undefined when the case is nearer the
 * passing cases' centroid than to every mode. Missing signals count as the
 * centre (they add no distance).
 *
 * @example assignMode(modes.assignment, (name) => row[name]) // 0 (mode-1), or undefined
 */
export function assignMode(assignment: ModeAssignment, valueOf: (signal: string) => number): number | undefined {
  const { signals, centers, scales, weights, centroids, passingCentroid } = assignment;
  const x = signals.map((name, c) => {
    const v = valueOf(name);
    return Number.isFinite(v) ? (weights[c]! * (v - centers[c]!)) / scales[c]! : 0;
  });
  const dist = (centre: readonly number[]) => x.reduce((s, xc, c) => s + (xc - centre[c]!) ** 2, 0);
  let best: number | undefined;
  let bestDistance = dist(passingCentroid);
  centroids.forEach((centre, m) => {
    const dm = dist(centre);
    if (dm < bestDistance) {
      bestDistance = dm;
      best = m;
    }
  });
  return best;
}

/**
 * The modes as binary signals on any table with the same signal columns (a
 * sealed split included): `mode=mode-1` is 1 where {@link assignMode} puts the
 * case in that mode. The rule was fixed on the exploration split, so testing
 * these on sealed cases is a fair test of "cases like this mode fail more".
 */
export function modeSignals(modes: FailureModes, signals: readonly TypedSignal[]): TypedSignal[] {
  const byName = new Map(signals.map((s) => [s.name, s]));
  const missing = modes.assignment.signals.filter((name) => !byName.has(name));
  if (missing.length > 0)
    throw new RangeError(
      `modeSignals(): the modes were found on signals ${JSON.stringify(missing)}, which these cases do not have; they have ${JSON.stringify([...byName.keys()])}`,
    );
  const n = signals[0]?.values.length ?? 0;
  const placed = Array.from({ length: n }, (_, i) =>
    assignMode(modes.assignment, (name) => byName.get(name)!.values[i]!),
  );
  return modes.modes.map((mode, m) => ({
    name: `mode=${mode.id}`,
    column: "mode",
    kind: "binary",
    level: mode.id,
    values: Float64Array.from(placed, (p) => (p === m ? 1 : 0)),
    tags: ["failure-mode", ...new Set(mode.defining.flatMap((s) => byName.get(s.signal)?.tags ?? []))],
  }));
}

interface Summary {
  count: number;
  mean: number;
  sd: number;
}

function allRows(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function stats(values: Float64Array, rows: readonly number[]): Summary {
  let count = 0;
  let sum = 0;
  for (const r of rows) {
    const v = values[r]!;
    if (Number.isNaN(v)) continue;
    count++;
    sum += v;
  }
  const mean = count > 0 ? sum / count : NaN;
  let ss = 0;
  for (const r of rows) {
    const v = values[r]!;
    if (!Number.isNaN(v)) ss += (v - mean) ** 2;
  }
  return { count, mean, sd: count > 1 ? Math.sqrt(ss / (count - 1)) : 0 };
}

/** Hedges' g of a vs b: the mean difference over the pooled SD, with the small-sample correction J. */
function hedgesG(a: Summary, b: Summary): number {
  const df = a.count + b.count - 2;
  const pooled = Math.sqrt(((a.count - 1) * a.sd ** 2 + (b.count - 1) * b.sd ** 2) / df);
  if (pooled === 0) return 0;
  return ((a.mean - b.mean) / pooled) * (1 - 3 / (4 * df - 1));
}

function definingSignal(signal: TypedSignal, modeRows: number[], contrastRows: number[]): DefiningSignal | undefined {
  const a = stats(signal.values, modeRows);
  const b = stats(signal.values, contrastRows);
  if (a.count === 0 || b.count === 0) return undefined;
  if (signal.kind === "binary") {
    const h = 2 * Math.asin(Math.sqrt(a.mean)) - 2 * Math.asin(Math.sqrt(b.mean));
    return {
      signal: signal.name,
      kind: signal.kind,
      modeMean: a.mean,
      contrastMean: b.mean,
      effect: h,
      effectName: "Cohen's h",
    };
  }
  if (a.count < 2 || b.count < 2) return undefined;
  return {
    signal: signal.name,
    kind: signal.kind,
    modeMean: a.mean,
    contrastMean: b.mean,
    effect: hedgesG(a, b),
    effectName: "Hedges' g",
  };
}

function groupSizes(fit: KMeansResult): number[] {
  const sizes = new Array<number>(fit.k).fill(0);
  for (const g of fit.assignments) sizes[g]!++;
  return sizes;
}

function nearestOf(points: Float64Array, i: number, others: Float64Array, rows: readonly number[], d: number): number {
  let best = Infinity;
  for (const j of rows) best = Math.min(best, squaredDistance(points, i, others, j, d));
  return best;
}

/** A seeded, sorted subsample of indices for the silhouette (all of them under the cap). */
function silhouetteSample(n: number, seed: number): number[] | undefined {
  if (n <= SILHOUETTE_CAP) return undefined;
  // Every ⌈n / cap⌉-th index from a seed-dependent offset: deterministic and spread over the cases.
  const step = Math.ceil(n / SILHOUETTE_CAP);
  const offset = Math.abs(seed) % step;
  const rows: number[] = [];
  for (let i = offset; i < n; i += step) rows.push(i);
  return rows;
}

function silhouetteOf(points: { values: Float64Array; d: number }, assignments: Int32Array, sample?: number[]): number {
  if (!sample) return silhouette(points, assignments);
  const { values, d } = points;
  const sub = new Float64Array(sample.length * d);
  sample.forEach((row, i) => sub.set(values.subarray(row * d, row * d + d), i * d));
  return silhouette(
    { values: sub, d },
    Int32Array.from(sample, (row) => assignments[row]!),
  );
}

function describeMethod(
  space: ModeSpace,
  d: number,
  seed: number,
  references: number,
  maxModes: number,
  minModeSize: number,
): string {
  const where =
    space === "failure-aware"
      ? `${d} signal(s) centred and scaled by the passing cases and weighted by |Hedges' g| of failing vs passing (failure-aware)`
      : `${d} signal(s) standardized over all cases, equal weights`;
  return (
    `k-means++ (10 starts, seed ${seed}) of the failing cases on ${where}; ` +
    `the number of modes by the gap statistic (${references} uniform references on the principal-axes box, 1-SE rule), ` +
    `at most ${maxModes}, every mode at least ${minModeSize} cases, and one mode unless the modes' mean silhouette is at least ${MIN_SILHOUETTE}`
  );
}
