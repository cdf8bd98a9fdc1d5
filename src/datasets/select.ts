import type { FailureCase } from "../core/index.ts";
import { sha256Hex, unitHash } from "./hash.ts";

/** Which cases to take; every field given narrows the selection. */
export interface Selection {
  /** Cases whose `split` is this one (or one of these). */
  readonly split?: string | readonly string[];
  /** Cases carrying every one of these tags. */
  readonly tags?: readonly string[];
  /** Exactly these cases (each must exist, else an error names the missing ones). */
  readonly ids?: readonly string[];
  /** After the other filters, the N cases with the smallest sha256(id). */
  readonly sample?: number;
  /** Include archived cases too (default: active only). */
  readonly includeArchived?: boolean;
}

/**
 * Which cases does this selection name? Filters by split, tags and ids, then
 * takes a stable sample: the N cases with the smallest sha256(id), the same N
 * on every machine and in every browser. The result keeps the input order
 * (or the order of `ids` when given).
 *
 * @example select(cases, { split: "adversarial", tags: ["color"], sample: 50 })
 */
export function select<C extends FailureCase>(cases: readonly C[], selection: Selection = {}): C[] {
  let chosen: C[];
  if (selection.ids) {
    const byId = new Map(cases.map((c) => [c.id, c]));
    const missing = selection.ids.filter((id) => !byId.has(id));
    if (missing.length)
      throw new Error(
        `select(): ${missing.length} id(s) not in the dataset: ${missing
          .slice(0, 20)
          .map((id) => `'${id}'`)
          .join(", ")}${missing.length > 20 ? ", …" : ""}; check the ids or import those cases first`,
      );
    chosen = [...new Set(selection.ids)].map((id) => byId.get(id)!);
  } else {
    chosen = [...cases];
  }
  if (!selection.includeArchived && !selection.ids) chosen = chosen.filter((c) => c.status !== "archived");
  if (selection.split !== undefined) {
    const splits = new Set(typeof selection.split === "string" ? [selection.split] : selection.split);
    chosen = chosen.filter((c) => c.split !== undefined && splits.has(c.split));
  }
  if (selection.tags?.length) {
    const wanted = selection.tags;
    chosen = chosen.filter((c) => wanted.every((tag) => c.tags.includes(tag)));
  }
  if (selection.sample !== undefined) chosen = stableSample(chosen, selection.sample);
  return chosen;
}

/**
 * Which N cases form the stable sample? The N with the smallest sha256(id)
 * (ties impossible: ids are unique), returned in their input order.
 *
 * @example stableSample(cases, 100).length // min(100, cases.length)
 */
export function stableSample<C extends { readonly id: string }>(cases: readonly C[], n: number): C[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`stableSample(): sample size ${n} must be a whole number ≥ 0`);
  if (n >= cases.length) return [...cases];
  const keyed = cases.map((c, i) => ({ i, key: sha256Hex(c.id) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i));
  const keep = new Set(keyed.slice(0, n).map((k) => k.i));
  return cases.filter((_, i) => keep.has(i));
}

export interface HoldoutOptions {
  /** Seal whole clusters (default: cases without a cluster count as their own) or single cases. */
  readonly by?: "cluster" | "id";
  /** Salt, so different studies may seal different cases; default "evalrx-holdout". */
  readonly salt?: string;
}

export interface Holdout<C> {
  /** Cases the loop may look at. */
  readonly explore: C[];
  /** Cases kept untouched until a hypothesis is decided. */
  readonly sealed: C[];
  /** The fraction of cases actually sealed (clusters make it inexact). */
  readonly sealedFraction: number;
}

/**
 * Which cases are sealed for verification? Each unit (a cluster, or a case
 * when `by: "id"` or it has no cluster) is sealed when the uniform hash of
 * `salt + unit` is below `fraction`: the same split on every machine, never
 * splitting a cluster, and adding cases never moves an existing case across.
 *
 * @example const { explore, sealed } = holdout(cases, 0.3, { by: "cluster" })
 */
export function holdout<C extends FailureCase>(
  cases: readonly C[],
  fraction: number,
  options: HoldoutOptions = {},
): Holdout<C> {
  if (!(fraction >= 0 && fraction <= 1))
    throw new Error(`holdout(): fraction ${fraction} must lie in [0, 1], e.g. 0.3 to seal about 30% of cases`);
  const by = options.by ?? "cluster";
  if (by !== "cluster" && by !== "id") throw new Error(`holdout(): by '${String(by)}' must be "cluster" or "id"`);
  const salt = options.salt ?? "evalrx-holdout";
  const sealedUnit = new Map<string, boolean>();
  const explore: C[] = [];
  const sealed: C[] = [];
  for (const c of cases) {
    // Distinct prefixes keep a case id from colliding with a cluster of the same name.
    const unit = by === "cluster" && c.cluster !== undefined ? `cluster:${c.cluster}` : `id:${c.id}`;
    let isSealed = sealedUnit.get(unit);
    if (isSealed === undefined) {
      isSealed = unitHash(`${salt}\n${unit}`) < fraction;
      sealedUnit.set(unit, isSealed);
    }
    (isSealed ? sealed : explore).push(c);
  }
  return { explore, sealed, sealedFraction: cases.length ? sealed.length / cases.length : 0 };
}
