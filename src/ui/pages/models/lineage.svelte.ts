import {
  lineageChain,
  lineageLeaves,
  promotable,
  promote,
  type LineageRecord,
  type LineageStep,
} from "../../../agent/lineage/index.ts";
import { LineageDb } from "../../../agent/lineage/lineage-db.browser.ts";
import type { Report, ReportRepair } from "../../../report/schema.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import { loadReport, reportRuns } from "../report/report-store.ts";

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
  readonly #app: AppServices;
  readonly #db: Promise<LineageDb>;

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
      const record = promote(offer.report, offer.repair.signature!, parent ? { parent } : {});
      await (await this.#db).add(record);
      await this.refresh();
    } catch (error) {
      this.failure = `promoting ${offer.repair.candidate} failed: ${errorText(error)}`;
    } finally {
      this.promoting = undefined;
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
