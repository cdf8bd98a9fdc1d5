/**
 * A promoted model: what one validated repair turned its parent into, and the
 * evidence that earned it the promotion. Every promoted model is the same two
 * things — the weights it runs (a bundled key or a model folder) and the repairs
 * wrapped around them, outermost last — so any backend that can load the weights
 * can run it: a prompt, scaffold or intervention promotion keeps its parent's
 * weights and adds one wrapper; a weights promotion (L4) points at a new folder.
 */
import * as v from "valibot";
import { TIERS, type PairedOutcome, type Tier } from "../repair.ts";

/** The paired test on the sealed (or repair-split) cases that validated a repair, as the report logged it. */
export interface PromotionEvidence extends Pick<
  PairedOutcome,
  "n" | "baselineFailures" | "candidateFailures" | "fixed" | "broken" | "delta" | "p" | "e"
> {
  /** The investigation whose M5 validated the repair. */
  readonly runId: string;
  readonly gamma: number | null;
  readonly test: string | null;
  readonly unit: string | null;
  readonly eMethod: string;
  /** On yes/no tasks: the yes-bias control the repair beat (fixed/broken/p against it). */
  readonly control: {
    readonly fixed: number;
    readonly broken: number;
    readonly p: number;
    readonly e: number;
    readonly beaten: boolean;
  } | null;
  /** Where M5's cases came from, in the report's words. */
  readonly cases: string | null;
}

/** One promoted model. */
export interface LineageRecord {
  /** The promoted model's id (`tiny-vlm+rewrite-context`): what `--model` and the Models page name it by. */
  readonly id: string;
  /** The model the repair was validated on: a bundled key, a folder, or another promoted id. */
  readonly parent: string;
  readonly tier: Tier;
  readonly repair: { readonly signature: string; readonly name: string; readonly description: string };
  /** The weights this model runs: a bundled key or a model folder (a new folder after an L4 promotion). */
  readonly weights: string;
  /** Repair signatures applied around the weights, innermost first (the parent's, then this one's). */
  readonly wrappers: readonly string[];
  readonly evidence: PromotionEvidence;
  /** The dataset version the repair was validated on. */
  readonly dataset: { readonly source: string; readonly fingerprint: string; readonly n: number };
  /** ISO 8601. */
  readonly promotedAt: string;
}

const short = v.pipe(v.string(), v.minLength(1), v.maxLength(2_000));
const text = v.pipe(v.string(), v.maxLength(100_000));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const finite = v.pipe(v.number(), v.finite());

const LineageSchema = v.object({
  id: short,
  parent: short,
  tier: v.picklist(TIERS),
  repair: v.object({ signature: short, name: short, description: text }),
  weights: short,
  wrappers: v.array(short),
  evidence: v.object({
    runId: short,
    n: count,
    baselineFailures: count,
    candidateFailures: count,
    fixed: count,
    broken: count,
    delta: finite,
    p: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    e: v.pipe(v.number(), v.minValue(0)),
    gamma: v.nullable(v.number()),
    test: v.nullable(short),
    unit: v.nullable(short),
    eMethod: text,
    control: v.nullable(v.object({ fixed: count, broken: count, p: v.number(), e: v.number(), beaten: v.boolean() })),
    cases: v.nullable(text),
  }),
  dataset: v.object({ source: v.pipe(v.string(), v.maxLength(2_000)), fingerprint: short, n: count }),
  promotedAt: v.pipe(v.string(), v.isoTimestamp("must be an ISO 8601 time such as 2026-12-01T12:00:00.000Z")),
});

/**
 * Is this value a promoted model's record? The record, or an error that names
 * `where` (a file and line, or a database key) and the first field that is wrong.
 *
 * @example parseLineageRecord(JSON.parse(line), "lineage.jsonl:3").id // "tiny-vlm+rewrite-context"
 */
export function parseLineageRecord(value: unknown, where: string): LineageRecord {
  const result = v.safeParse(LineageSchema, value);
  if (result.success) return result.output;
  const issue = result.issues[0]!;
  const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
  throw new RangeError(`${where}: not a promoted model: ${path ? `field '${path}' ` : ""}${issue.message}`);
}

/** What a lineage store holds: the records, and what is not a record, each named (the records around it are kept). */
export interface LineageRead {
  readonly records: LineageRecord[];
  readonly problems: string[];
}

/** The one interface of the two lineage stores (`LineageFile` under Node, `LineageDb` in the page). */
export interface LineageStore {
  /** Every record, oldest promotion first. */
  read(): Promise<LineageRead>;
  /** Adds a record; rejects when its id is taken (a promoted model is never silently replaced). */
  add(record: LineageRecord): Promise<void>;
}
