import type { LineageRecord } from "./record.ts";

/** One step of a model's lineage, as the report and the Models page show it. */
export interface LineageStep {
  readonly id: string;
  readonly parent: string;
  readonly tier: string;
  readonly repair: string;
  readonly signature: string;
  /** Change of the failure rate on the validating cases (negative is better). */
  readonly delta: number;
  readonly fixed: number;
  readonly broken: number;
  readonly n: number;
  readonly p: number;
  readonly e: number;
  readonly runId: string;
  readonly dataset: string;
  readonly promotedAt: string;
}

/**
 * The chain of promotions that made `id`, root first: each step's parent is
 * the previous step's id; the first step's parent is the original model.
 * Throws when a record names a parent that loops back (a corrupt store).
 *
 * @example lineageChain(records, "tiny-vlm+rewrite-context+self-consistency-3").map((s) => s.parent)
 * // ["tiny-vlm", "tiny-vlm+rewrite-context"]
 */
export function lineageChain(records: readonly LineageRecord[], id: string): LineageStep[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const steps: LineageStep[] = [];
  const seen = new Set<string>();
  for (let r = byId.get(id); r; r = byId.get(r.parent)) {
    if (seen.has(r.id)) throw new Error(`lineage of '${id}' loops at '${r.id}'`);
    seen.add(r.id);
    steps.push({
      id: r.id,
      parent: r.parent,
      tier: r.tier,
      repair: r.repair.name,
      signature: r.repair.signature,
      delta: r.evidence.delta,
      fixed: r.evidence.fixed,
      broken: r.evidence.broken,
      n: r.evidence.n,
      p: r.evidence.p,
      e: r.evidence.e,
      runId: r.evidence.runId,
      dataset: r.dataset.fingerprint,
      promotedAt: r.promotedAt,
    });
  }
  return steps.reverse();
}

/** The promoted models no other promotion descends from: one chain each, for the Models page. */
export function lineageLeaves(records: readonly LineageRecord[]): LineageRecord[] {
  const parents = new Set(records.map((r) => r.parent));
  return records.filter((r) => !parents.has(r.id));
}
