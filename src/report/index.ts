/** `evalrx/report`: the versioned report format, its validator, and the self-contained HTML export. */
export {
  REPORT_VERSION,
  MAX_REPORT_BYTES,
  ReportSchema,
  parseReport,
  validateReport,
  type Report,
  type ReportHypothesis,
  type ReportSignal,
  type ReportRepair,
} from "./schema.ts";
export { renderReportHtml, escapeHtml } from "./html.ts";
export { neutralizeBidi } from "./safe-text.ts";
