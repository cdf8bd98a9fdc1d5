import {
  lineageChain,
  lineageLeaves,
  promotable,
  type LineageRecord,
  type LineageStep,
} from "../../../agent/lineage/index.ts";
import { LineageDb } from "../../../agent/lineage/lineage-db.browser.ts";
import type { Report, ReportRepair } from "../../../report/schema.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import { ModelFolders } from "../../app/model-folders.ts";
import { loadReport, reportRuns } from "../report/report-store.ts";
import { promoteHere } from "./promote-here.ts";

/** A validated repair of a stored investigation that can be promoted now. */
export interface PromotionOffer {
  readonly runId: string;
  readonly model: string;
  readonly repair: ReportRepair;
  readonly report: Report;
}

/**
 * The Models page's lineage: every promoted model as a chain from the original
 * model, each step with its verified delta, and the validated repairs of the
 * investigations stored in this browser that are not promoted yet.
 */
export class LineageState {
  records = $state.raw<readonly LineageRecord[]>([]);
  offers = $state.raw<readonly PromotionOffer[]>([]);
  problems = $state.raw<readonly string[]>([]);
  failure = $state<string | undefined>();
  promoting = $state<string | undefined>();
  /** The promoted model being loaded, by id. */
  loading = $state<string | undefined>();
  readonly #app: AppServices;
  readonly #db: Promise<LineageDb>;
  readonly #folders = new ModelFolders();

  constructor(app: AppServices, name?: string) {
    this.#app = app;
    this.#db = LineageDb.open(name);
  }

  /** One chain per promoted model nothing descends from, root first. */
  get chains(): { readonly id: string; readonly steps: readonly LineageStep[] }[] {
    return lineageLeaves(this.records).map((r) => ({ id: r.id, steps: lineageChain(this.records, r.id) }));
  }

  /** Reads the promoted models and the stored reports again. */
  async refresh(): Promise<void> {
    try {
      const { records, problems } = await (await this.#db).read();
      const store = await this.#app.store.ready;
      const done = new Set(records.map((r) => `${r.evidence.runId}|${r.repair.signature}`));
      const offers: PromotionOffer[] = [];
      for (const run of reportRuns(this.#app.store.runs)) {
        const report = await loadReport(store, run.id).catch(() => undefined);
        if (!report) continue;
        const model = String(report.provenance.model?.["key"] ?? run.model);
        for (const repair of promotable(report))
          if (!done.has(`${report.runId}|${repair.signature}`)) offers.push({ runId: run.id, model, repair, report });
      }
      this.records = records;
      this.problems = problems;
      this.offers = offers;
    } catch (error) {
      this.failure = `reading the lineage failed: ${errorText(error)}`;
    }
  }

  /** Promotes one offer (refused, with the reason, when the report does not validate it). */
  async promote(offer: PromotionOffer): Promise<void> {
    this.promoting = `${offer.runId}|${offer.repair.signature}`;
    this.failure = undefined;
    try {
      const parent = this.records.find((r) => r.id === offer.model);
      const weights = mergedWeights(offer.repair);
      const db = await this.#db;
      await promoteHere(
        offer.report,
        offer.repair.signature!,
        { records: this.records, add: (r) => db.add(r), folders: this.#folders },
        { ...(parent ? { parent } : {}), ...(weights ? { weights } : {}) },
      );
      await this.refresh();
      if (weights?.startsWith("files:")) await this.#app.models.refreshFolders();
    } catch (error) {
      this.failure = `promoting ${offer.repair.candidate} failed: ${errorText(error)}`;
    } finally {
      this.promoting = undefined;
    }
  }

  /**
   * Loads a promoted model by its id in the model worker. The page runs new weights (L4: the merged folder in
   * its model store) directly; a promotion that wraps a repair around them loads in the CLI only for now.
   */
  async load(id: string): Promise<void> {
    this.failure = undefined;
    const record = this.records.find((r) => r.id === id);
    try {
      if (!record) throw new Error(`no promoted model '${id}' in this browser`);
      const why = loadableHere(record);
      if (why) throw new Error(why);
      this.loading = id;
      const source = await this.#app.models.sourceFor(record.weights);
      if (source.kind !== "files") throw new Error(`'${record.weights}' is not a folder in this browser`);
      // Promotion keeps the folder under the id (promoteHere), so the name it loads under, files:<id>, resolves.
      await this.#app.models.load({ ...source, key: record.id });
    } catch (error) {
      this.failure = `loading ${id} failed: ${errorText(error)}`;
    } finally {
      this.loading = undefined;
    }
  }

  dispose(): void {
    void this.#db.then((db) => db.close()).catch(() => undefined);
  }
}

/** A failure-rate change as the page writes it: "−28.3 pp" (negative: fewer failures). */
export function deltaText(delta: number): string {
  return `${delta > 0 ? "+" : delta < 0 ? "−" : "±"}${Math.abs(100 * delta).toFixed(1)} pp`;
}

/** An L4 repair's merged folder, as its training record names it (`files:<name>` in the page). */
export function mergedWeights(repair: ReportRepair): string | undefined {
  const weights = repair.tier === "L4" ? repair.training?.["weights"] : undefined;
  return typeof weights === "string" ? weights : undefined;
}

/**
 * Why the page cannot load this promoted model itself, or undefined when it can: new weights kept in this
 * browser's model store, with no repair wrapped around them.
 *
 * @example loadableHere({ ...record, weights: "files:tiny-vlm+lora-last-layer.qkvo-r4-a8-steps300-seed1", wrappers: [] }) // undefined
 */
export function loadableHere(record: LineageRecord): string | undefined {
  if (record.wrappers.length)
    return `${record.id} wraps ${record.wrappers.join(", ")} around its weights; the page does not apply promoted wrappers yet — run it with evalrx investigate --model ${record.id}`;
  if (!record.weights.startsWith("files:"))
    return `${record.id}'s weights are '${record.weights}', not a folder kept in this browser`;
  return undefined;
}
