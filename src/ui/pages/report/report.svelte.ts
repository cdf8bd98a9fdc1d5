import { renderReportHtml } from "../../../report/html.ts";
import type { Report } from "../../../report/schema.ts";
import { reportViewParts, type ReportView, type SectionView } from "../../../report/view.ts";
import type { AppServices } from "../../app/context.ts";
import { href, type Route } from "../../app/routes.ts";
import { errorText } from "../../app/errors.ts";
import { downloadBlob } from "../runs/run-files.ts";
import { loadReport, readReportFile, saveReport } from "./report-store.ts";
import { inSlices, nextTask } from "./slices.ts";

/** This page's route, `#/report[/<id>]`: open a report.json and list stored reports, or read one. */
export type ReportRoute = { readonly page: "report"; readonly id?: string };

/**
 * This page's route as the frame's `Route`. The frame (routes.ts) declares it; typed here as well so this
 * page compiles on its own while the frame's copy with the report route is committed apart from it.
 *
 * @example href(reportRoute("investigate-1")) // "#/report/investigate-1"
 */
export function reportRoute(id?: string): Route {
  const route: ReportRoute = id === undefined ? { page: "report" } : { page: "report", id };
  return route as unknown as Route;
}

/**
 * The link to this page, or to one stored report.
 *
 * @example reportHref() // "#/report"
 */
export function reportHref(id?: string): string {
  return href(reportRoute(id));
}

/**
 * The main thread's slice for building the view's sections: as many per task as fit in it (one per task waited
 * for a task 14 times, tens of ms each on a loaded machine), and no task much over it.
 */
const SLICE_MS = 12;

/** Figure widths are rounded to this step, so a resize by a few px does not rebuild every scene. */
const WIDTH_STEP = 40;

/**
 * Opens a `report.json` (the CLI's, or one the page exported): reads it as
 * untrusted text, checks it against the schema, keeps it in the store (a
 * run of kind `investigation` with the report as its `report` score) and
 * opens `#/report/<id>`. Newest file wins when several are picked in a row.
 */
export class ReportOpener {
  failure = $state<string | undefined>();
  busy = $state(false);
  #generation = 0;
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  async open(file: File): Promise<void> {
    const generation = ++this.#generation;
    this.failure = undefined;
    this.busy = true;
    try {
      const report = readReportFile(await file.text(), file.name);
      const store = await this.#app.store.ready;
      const id = await saveReport(store, report, file.name);
      if (generation !== this.#generation) return;
      await this.#app.store.changed({ kind: "runs", id });
      this.#app.router.go(reportRoute(id));
    } catch (error) {
      if (generation === this.#generation) this.failure = errorText(error);
    } finally {
      if (generation === this.#generation) this.busy = false;
    }
  }
}

/**
 * One stored report on screen: read from the store (its stored copy, or
 * folded from its run's events), its view built for the width the page
 * has, the overlay opacity the reader chose, images resolved from the store
 * by content hash when the report does not carry them, and the two exports.
 */
export class ReportState {
  readonly id: string;
  report = $state.raw<Report | undefined>();
  state = $state<"loading" | "ready" | "missing" | "failed">("loading");
  failure = $state<string | undefined>();
  /** The content column's width in px (measured by the page). */
  width = $state(0);
  /** The evidence overlays' opacity at their strongest cell. */
  opacity = $state(0.6);
  /** Object URLs of stored images, by content hash (for reports that name images without carrying them). */
  images = $state.raw<ReadonlyMap<string, string>>(new Map());
  readonly #app: AppServices;
  #disposed = false;

  /** The figures' width: the column less its padding, in steps, within what the figures draw well. */
  get figureWidth(): number {
    return Math.max(480, Math.min(1200, Math.floor(this.width / WIDTH_STEP) * WIDTH_STEP));
  }

  /**
   * The report's view; rebuilt when the report or the width changes (opacity redraws the overlays only). Not
   * built before the page has measured its width, so a report is drawn once, not once at a guess and again.
   * Its sections are built in slices of a few ms (the evidence cases and figures of a 600-case report hold the
   * main thread for a long task when built at once) and the view is put on screen whole, once built.
   */
  view = $state.raw<ReportView | undefined>();
  #building = 0;

  constructor(app: AppServices, id: string) {
    this.#app = app;
    this.id = id;
    $effect(() => {
      const report = this.report;
      const width = this.width > 0 ? this.figureWidth : 0;
      if (report && width) void this.#build(report, width);
    });
  }

  async #build(report: Report, width: number): Promise<void> {
    const token = ++this.#building;
    const parts = reportViewParts(report, { width });
    const built = await inSlices(parts.sections, SLICE_MS, nextTask, () => token === this.#building && !this.#disposed);
    if (!built) return;
    const sections = built.filter((s): s is SectionView => !!s);
    this.view = { title: parts.title, header: parts.header, sections, width: parts.width };
  }

  async load(): Promise<void> {
    this.state = "loading";
    this.failure = undefined;
    try {
      const store = await this.#app.store.ready;
      const report = await loadReport(store, this.id);
      if (this.#disposed) return;
      if (!report) {
        this.state = "missing";
        return;
      }
      this.report = report;
      this.state = "ready";
      await this.#resolveImages(report);
    } catch (error) {
      if (this.#disposed) return;
      this.failure = errorText(error);
      this.state = "failed";
    }
  }

  /** Images the report names by hash but does not carry: looked up in this browser's store, once each. */
  async #resolveImages(report: Report): Promise<void> {
    const evidence = report.evidence;
    if (!evidence) return;
    const wanted = new Set<string>();
    for (const h of evidence.hypotheses)
      for (const c of [...h.failing, ...h.passing])
        if (c.image?.hash && !evidence.images[c.image.hash]) wanted.add(c.image.hash);
    if (!wanted.size) return;
    const store = await this.#app.store.ready;
    const found = new Map<string, string>();
    for (const hash of wanted) {
      const image = await store.getImage(hash).catch(() => undefined);
      if (image) found.set(hash, URL.createObjectURL(new Blob([image.bytes as BlobPart], { type: image.type })));
    }
    if (this.#disposed) {
      for (const url of found.values()) URL.revokeObjectURL(url);
      return;
    }
    this.images = found;
  }

  /** The image to draw for a case: the report's own, else the store's copy of the same bytes. */
  imageSrc(image: { readonly src?: string; readonly hash?: string } | undefined): string | undefined {
    if (!image) return undefined;
    return image.src ?? (image.hash ? this.images.get(image.hash) : undefined);
  }

  /** The same self-contained HTML file the CLI writes, for this report. */
  exportHtml(): void {
    if (!this.report) return;
    downloadBlob(new Blob([renderReportHtml(this.report)], { type: "text/html" }), `${this.report.runId}.html`);
  }

  /** The report's data, as `report.json`. */
  exportJson(): void {
    if (!this.report) return;
    downloadBlob(
      new Blob([JSON.stringify(this.report, null, 2) + "\n"], { type: "application/json" }),
      `${this.report.runId}.report.json`,
    );
  }

  dispose(): void {
    this.#disposed = true;
    for (const url of this.images.values()) URL.revokeObjectURL(url);
  }
}
