/** `src/share`: share links (a report or a run in a URL fragment) and bundles (one ZIP file), both read as untrusted. */
export { ShareError, type ShareRefusal } from "./errors.ts";
export { toBase64Url, fromBase64Url } from "./base64url.ts";
export { deflateRaw, inflateRawBounded } from "./deflate.ts";
export {
  SHARE_FORMAT,
  SHARE_VERSION,
  OMISSIONS,
  checkReport,
  checkSharePayload,
  parseRunSummary,
  runExportOf,
  type Omission,
  type ReportShare,
  type RunShare,
  type SharePayload,
  type SharedItem,
  type SharedMetric,
  type SharedRunRecord,
  type SharedRunSummary,
} from "./payload.ts";
export { MAX_LINK_CHARS, MAX_SHARE_JSON_BYTES, SHARE_ROUTE, encodeShare, decodeShare, shareUrl } from "./link.ts";
export { reportLink, runLink, runShare, type LinkShare } from "./for-link.ts";
export {
  BUNDLE_EXTENSION,
  BUNDLE_FORMAT,
  BUNDLE_LIMITS,
  BUNDLE_MANIFEST,
  BUNDLE_VERSION,
  readBundle,
  writeBundle,
  type BundleContent,
  type BundleLimits,
} from "./bundle.ts";
