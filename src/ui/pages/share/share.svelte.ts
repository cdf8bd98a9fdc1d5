import {
  decodeShare,
  readBundle,
  runExportOf,
  runShare,
  writeBundle,
  SHARE_FORMAT,
  SHARE_VERSION,
  BUNDLE_LIMITS,
  type BundleContent,
  type SharePayload,
} from "../../../share/index.ts";
import { renderReportHtml } from "../../../report/html.ts";
import { neutralizeBidi } from "../../../report/safe-text.ts";
import type { RunExport } from "../../../store/types.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import { downloadBlob } from "../runs/run-files.ts";
import { saveReport } from "../report/report-store.ts";
import { bundleName, reportHtmlName } from "./share-view.ts";

/** What the share page holds: nothing yet, a link being read, a refusal (and why), or the share itself. */
export type ShareLoad =
  | { readonly state: "empty" }
  | { readonly state: "reading" }
  | { readonly state: "refused"; readonly message: string; readonly from: "link" | "bundle" }
  | {
      readonly state: "open";
      /** What was shared, as it was shared (what "save" keeps). */
      readonly share: SharePayload;
      /** The same with its bidi controls made visible (what the page shows: text cannot pass for other text). */
      readonly shown: SharePayload;
      readonly from: "link" | "bundle";
      readonly run?: RunExport;
    };

/**
 * The share page's state: the payload of `#/share/<payload>` (or a bundle
 * file the user opened) read and checked — newest wins, so a second link
 * pasted while the first is read replaces it — and "save to my runs".
 * Nothing from a refused payload is kept.
 */
export class ShareState {
  load = $state.raw<ShareLoad>({ state: "empty" });
  saving = $state(false);
  /** The run id the shared run was saved as (`#/runs/<id>`). */
  saved = $state<string | undefined>();
  /** The run id the shared report was saved as (`#/report/<id>`). */
  savedReport = $state<string | undefined>();
  actionFailure = $state<string | undefined>();
  #generation = 0;
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  /** Reads a link's payload (the text after `#/share/`); undefined shows the empty state. */
  async open(payload: string | undefined): Promise<void> {
    const generation = ++this.#generation;
    this.saved = undefined;
    this.savedReport = undefined;
    this.actionFailure = undefined;
    if (payload === undefined) {
      this.load = { state: "empty" };
      return;
    }
    this.load = { state: "reading" };
    try {
      const share = await decodeShare(payload);
      if (generation === this.#generation)
        this.load = { state: "open", share, shown: neutralizeBidi(share), from: "link" };
    } catch (error) {
      if (generation === this.#generation) this.load = { state: "refused", message: errorText(error), from: "link" };
    }
  }

  /** Opens a bundle file: its size is bounded before it is read, then `readBundle` checks it whole. */
  async openBundle(file: File): Promise<void> {
    const generation = ++this.#generation;
    this.saved = undefined;
    this.savedReport = undefined;
    this.actionFailure = undefined;
    const refuse = (message: string) => {
      if (generation === this.#generation) this.load = { state: "refused", message, from: "bundle" };
    };
    if (file.size > BUNDLE_LIMITS.fileBytes)
      return refuse(
        `${file.name} is ${file.size.toLocaleString("en")} bytes; bundles up to ${BUNDLE_LIMITS.fileBytes.toLocaleString("en")} bytes are read`,
      );
    this.load = { state: "reading" };
    try {
      const content = readBundle(new Uint8Array(await file.arrayBuffer()));
      if (generation !== this.#generation) return;
      const share = shareOf(content);
      this.load = {
        state: "open",
        share,
        shown: neutralizeBidi(share),
        from: "bundle",
        ...(content.kind === "run" ? { run: content.run } : {}),
      };
    } catch (error) {
      refuse(`${file.name}: ${errorText(error)}`);
    }
  }

  /** The run file "save to my runs" stores: the bundle's whole run, or the link's run and items. */
  #runFile(): RunExport | undefined {
    const load = this.load;
    if (load.state !== "open" || load.share.kind !== "run") return undefined;
    return load.run ?? runExportOf(load.share, new Date().toISOString());
  }

  /** Whether the shared run can be saved as a run of this browser (a link without its items cannot). */
  get canSave(): boolean {
    const load = this.load;
    return (
      load.state === "open" &&
      load.share.kind === "run" &&
      (load.run !== undefined || !load.share.omitted.includes("items"))
    );
  }

  /** Stores the shared run as a run of this browser (refused when one with its id is stored already). */
  async save(): Promise<void> {
    const data = this.#runFile();
    if (!data || !this.canSave) return;
    this.saving = true;
    this.actionFailure = undefined;
    try {
      const store = await this.#app.store.ready;
      if (await store.getRun(data.run.id)) {
        this.saved = data.run.id;
        this.actionFailure = `A run '${data.run.id}' is already stored in this browser; it was not replaced.`;
        return;
      }
      await store.importRun(data);
      this.#app.store.changed({ kind: "runs", id: data.run.id });
      if (data.dataset) this.#app.store.changed({ kind: "datasets", id: data.dataset.id });
      this.saved = data.run.id;
    } catch (error) {
      this.actionFailure = `Saving the run failed: ${errorText(error)}`;
    } finally {
      this.saving = false;
    }
  }

  /**
   * Keeps the shared report among this browser's reports (listed under `#/report`, opened at
   * `#/report/<id>`), as it was shared: a link's report without the per-case detail the link dropped.
   */
  async saveReport(): Promise<void> {
    const load = this.load;
    if (load.state !== "open" || load.share.kind !== "report") return;
    this.saving = true;
    this.actionFailure = undefined;
    try {
      const store = await this.#app.store.ready;
      const id = await saveReport(store, load.share.report, load.from === "link" ? "a share link" : "a bundle file");
      this.#app.store.changed({ kind: "runs", id });
      this.savedReport = id;
    } catch (error) {
      this.actionFailure = `Saving the report failed: ${errorText(error)}`;
    } finally {
      this.saving = false;
    }
  }

  /** Downloads the shared report as the same self-contained HTML file the CLI and the report page write. */
  downloadHtml(): void {
    const load = this.load;
    if (load.state !== "open" || load.share.kind !== "report") return;
    try {
      const html = renderReportHtml(load.share.report);
      downloadBlob(new Blob([html], { type: "text/html" }), reportHtmlName(load.share));
    } catch (error) {
      this.actionFailure = `Writing the HTML file failed: ${errorText(error)}`;
    }
  }

  /** Downloads what is shown as a bundle file (the link's content; a bundle's whole run). */
  downloadBundle(): void {
    const load = this.load;
    if (load.state !== "open") return;
    try {
      const content: BundleContent =
        load.share.kind === "report"
          ? { kind: "report", report: load.share.report }
          : { kind: "run", run: this.#runFile()! };
      downloadBlob(new Blob([writeBundle(content) as BlobPart], { type: "application/zip" }), bundleName(load.share));
    } catch (error) {
      this.actionFailure = `Writing the bundle failed: ${errorText(error)}`;
    }
  }
}

/** A bundle's content as the page shows a share: everything kept, nothing omitted. */
function shareOf(content: BundleContent): SharePayload {
  if (content.kind === "run") return runShare(content.run, true);
  return { format: SHARE_FORMAT, version: SHARE_VERSION, kind: "report", omitted: [], report: content.report };
}
