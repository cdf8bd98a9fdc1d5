/**
 * Why a share link or a bundle was refused. Every refusal says what was
 * wrong and what to do, and nothing from the payload is shown once it is
 * refused. `reason` lets a page or the CLI tell the cases apart without
 * parsing the sentence.
 */
export type ShareRefusal =
  /** The link or file is larger than a share may be, before anything is unpacked. */
  | "too-long"
  /** The link's text is not base64url. */
  | "not-base64"
  /** The link names a format version this build does not read. */
  | "version"
  /** Unpacking would exceed the bound: a decompression bomb, or a damaged stream. */
  | "too-large-unpacked"
  /** The compressed data (or the archive) is damaged. */
  | "corrupt"
  /** The unpacked text is not JSON. */
  | "not-json"
  /** The JSON is not what a share holds: a field is missing or of the wrong kind. */
  | "schema"
  /** The content is fine but too large to fit a link (offer a bundle instead). */
  | "too-big-for-link";

/**
 * A share link or bundle that cannot be opened (or made), with the reason.
 *
 * @example new ShareError("not-base64", "the link has '%' at character 12, which base64url does not use")
 */
export class ShareError extends Error {
  readonly reason: ShareRefusal;

  constructor(reason: ShareRefusal, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ShareError";
    this.reason = reason;
  }
}
