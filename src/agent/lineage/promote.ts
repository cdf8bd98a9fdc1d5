import type { Report, ReportRepair } from "../../report/schema.ts";
import { TIERS, type Tier } from "../repair.ts";
import type { LineageRecord } from "./record.ts";

/** A promotion that cannot be made: the message says why and what would make it possible. */
export class PromotionRefused extends Error {
  override readonly name = "PromotionRefused";
}

/** A promoted model's default id: the parent's id, `+`, the repair's signature made path-safe. */
export function promotedId(parent: string, signature: string): string {
  const base = parent.replace(/^.*[\\/]/, "") || parent;
  return `${base}+${signature.replace(/[^\w.-]+/g, "-").replace(/-+$/, "")}`;
}

function describe(row: ReportRepair): string {
  return `${row.signature ?? "(no signature)"} (${row.tier} ${row.candidate}: ${row.validated ? "validated" : "not validated"})`;
}

export interface PromotionOptions {
  /** The parent's own record when it is a promoted model (its weights and wrappers are inherited). */
  readonly parent?: LineageRecord;
  /** Where the parent's weights are, when it is not a promoted model (default: its key, which the loader resolves). */
  readonly parentWeights?: string;
  /** For an L4 repair: the folder holding the merged model (the new weights). */
  readonly weights?: string;
  /** The promoted model's id (default `promotedId(parent, signature)`). */
  readonly id?: string;
  readonly now?: () => Date;
}

/**
 * Turns one validated repair of an investigation's report into a promoted
 * model: the parent it was validated on, the repair, the paired evidence of
 * M5 (fixed, broken, p, e-value, the yes-bias control), and the dataset
 * version. Refuses — with what would have to change — an incomplete report,
 * a repair the report does not hold, and any repair that M5 did not validate.
 *
 * @example
 * promote(report, "rewrite:context").id // "tiny-vlm+rewrite-context"
 * promote(report, "self-consistency:3") // throws PromotionRefused: "… was not validated …"
 */
export function promote(report: Report, signature: string, options: PromotionOptions = {}): LineageRecord {
  const where = `report ${report.runId}`;
  if (report.kind !== "investigate")
    throw new PromotionRefused(
      `${where} is a '${String(report.kind)}' report; only an investigation validates repairs`,
    );
  if (!report.complete)
    throw new PromotionRefused(`${where} is incomplete (the run stopped before it finished); resume it first`);
  const repairs = report.repairs;
  if (!repairs || repairs.candidates.length === 0)
    throw new PromotionRefused(`${where} tried no repair (M5 did not run or had nothing to repair)`);
  const row = repairs.candidates.find((c) => c.signature === signature);
  if (!row) {
    const validated = repairs.candidates.filter((c) => c.validated && c.signature);
    throw new PromotionRefused(
      `${where} has no repair '${signature}'; it tried ${repairs.candidates.map(describe).join(", ")}` +
        (validated.length ? "" : " — none was validated, so nothing in it can be promoted"),
    );
  }
  if (!row.validated)
    throw new PromotionRefused(
      `${where}: repair '${signature}' (${row.tier} ${row.candidate}) was not validated — it fixed ${row.fixed} and broke ${row.broken} of ${row.n} cases, p = ${row.p ?? "—"} at γ = ${row.gamma ?? "—"}` +
        (row.control && !row.control.beaten ? ", and it did not beat the yes-bias control" : "") +
        "; only a repair that held on the held-out cases can be promoted",
    );
  if (row.p === null || row.e === null || row.delta === null)
    throw new PromotionRefused(`${where}: repair '${signature}' has no p-value, e-value or delta to promote on`);
  const tier = row.tier as Tier;
  if (!TIERS.includes(tier))
    throw new PromotionRefused(`${where}: repair '${signature}' has unknown tier '${row.tier}'`);
  const model = report.provenance.model ?? {};
  const key = typeof model["key"] === "string" ? model["key"] : undefined;
  if (!key) throw new PromotionRefused(`${where} does not name the model it ran (provenance.model.key)`);
  if (options.parent && options.parent.id !== key)
    throw new PromotionRefused(`${where} ran model '${key}', not the promoted model '${options.parent.id}'`);
  const inherited = options.parent ? options.parent.wrappers : [];
  const parentWeights = options.parent?.weights ?? options.parentWeights ?? key;
  if (tier === "L4" && !options.weights)
    throw new PromotionRefused(`${where}: repair '${signature}' changes weights (L4); give the merged model's folder`);
  if (tier !== "L4" && options.weights)
    throw new PromotionRefused(`${where}: repair '${signature}' is ${tier}, which keeps the parent's weights`);
  return {
    id: options.id ?? promotedId(key, signature),
    parent: key,
    tier,
    repair: { signature, name: row.candidate, description: row.description },
    weights: options.weights ?? parentWeights,
    wrappers: tier === "L4" ? [...inherited] : [...inherited, signature],
    evidence: {
      runId: report.runId,
      n: row.n,
      baselineFailures: row.baselineFailures,
      candidateFailures: row.candidateFailures,
      fixed: row.fixed,
      broken: row.broken,
      delta: row.delta,
      p: row.p,
      e: row.e,
      gamma: row.gamma ?? null,
      test: row.test ?? null,
      unit: row.unit ?? null,
      eMethod: row.eMethod,
      control: row.control
        ? {
            fixed: row.control.fixed,
            broken: row.control.broken,
            p: row.control.p ?? 1,
            e: row.control.e ?? 0,
            beaten: row.control.beaten,
          }
        : null,
      cases: row.cases ?? repairs.cases ?? null,
    },
    dataset: {
      source: report.provenance.data.source,
      fingerprint: report.provenance.data.fingerprint,
      n: report.provenance.data.n,
    },
    promotedAt: (options.now?.() ?? new Date()).toISOString(),
  };
}

/** The validated repairs of a report that `promote` would accept (what a Promote button offers). */
export function promotable(report: Report): ReportRepair[] {
  if (report.kind !== "investigate" || !report.complete) return [];
  return (report.repairs?.candidates ?? []).filter((c) => c.validated && c.signature !== undefined);
}
