/**
 * Share links: a report or a run, as JSON, compressed (raw DEFLATE) and
 * written in base64url after `#/share/1.` — the fragment of the app's URL, so
 * opening a link needs no server and sends nothing anywhere (browsers never
 * send the fragment). The page and the CLI make the same links.
 *
 * Reading one is bounded on both sides: a link longer than `MAX_LINK_CHARS`
 * is refused before anything is decoded, and unpacking stops at
 * `MAX_SHARE_JSON_BYTES`; then the JSON is checked against the schema.
 */
import { fromBase64Url, toBase64Url } from "./base64url.ts";
import { deflateRaw, inflateRawBounded } from "./deflate.ts";
import { ShareError } from "./errors.ts";
import { checkSharePayload, SHARE_VERSION, type SharePayload } from "./payload.ts";

/** The most characters a link's payload may have, made or read: 32 KiB, which every browser and chat tool carries. */
export const MAX_LINK_CHARS = 32 * 1024;

/** The most bytes a link's payload may unpack to (a report without per-case detail is ~60 KB of JSON). */
export const MAX_SHARE_JSON_BYTES = 1024 * 1024;

/** The route prefix of a share link's fragment. */
export const SHARE_ROUTE = "#/share/";

const PREFIX = `${SHARE_VERSION}.`;

/**
 * The link payload (`1.<base64url>`) of a share: its JSON, compressed. Does
 * not check the length: see `MAX_LINK_CHARS` and `shareForLink`.
 *
 * @example await encodeShare({ format: "evalrx-share", version: 1, kind: "report", omitted: [], report }) // "1.rVbbbtswDP2…"
 */
export async function encodeShare(payload: SharePayload): Promise<string> {
  const json = new TextEncoder().encode(JSON.stringify(payload));
  return PREFIX + toBase64Url(await deflateRaw(json));
}

/**
 * What a link payload holds, checked: its length first, then its base64url,
 * then the bounded unpacking, then JSON and the share schema. Throws a
 * `ShareError` (with a `reason`) that says what was wrong; nothing of a
 * refused payload is returned.
 *
 * @example await decodeShare("1.rVbbbtswDP2…") // { kind: "report", report: {…}, omitted: ["evidence"] }
 */
export async function decodeShare(token: string): Promise<SharePayload> {
  if (typeof token !== "string") throw new TypeError("decodeShare(): expected the link's text after #/share/");
  if (token.length > MAX_LINK_CHARS)
    throw new ShareError(
      "too-long",
      `this link carries ${token.length.toLocaleString("en")} characters; a share link holds at most ${MAX_LINK_CHARS.toLocaleString("en")}. Ask for the bundle file instead (Share → Download bundle).`,
    );
  const dot = token.indexOf(".");
  const version = dot < 0 ? "" : token.slice(0, dot);
  if (dot < 0 || !/^\d{1,4}$/.test(version))
    throw new ShareError(
      "not-base64",
      "this link does not start with a share version (e.g. #/share/1.…): it was cut, or it is not an EvalRx share link",
    );
  if (Number(version) !== SHARE_VERSION)
    throw new ShareError(
      "version",
      `this link is share version ${version}; this EvalRx reads version ${SHARE_VERSION} (a newer EvalRx made it?)`,
    );
  const compressed = fromBase64Url(token.slice(dot + 1));
  const bytes = await inflateRawBounded(compressed, MAX_SHARE_JSON_BYTES);
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    // The parser's message quotes the text; nothing of a refused payload is shown, so it is not repeated.
    throw new ShareError(
      "not-json",
      `the link unpacks to ${bytes.length.toLocaleString("en")} bytes that are not JSON: it is not an EvalRx share`,
      { cause: error },
    );
  }
  return checkSharePayload(data);
}

/**
 * The full URL of a share link on the app at `base` (its address, with or
 * without a trailing slash or a fragment of its own).
 *
 * @example shareUrl("https://evalrx.example/app", "1.rVbb…") // "https://evalrx.example/app/#/share/1.rVbb…"
 * @example shareUrl("http://localhost:4173/index.html", "1.rVbb…") // "http://localhost:4173/index.html#/share/1.rVbb…"
 */
export function shareUrl(base: string, token: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new TypeError(`the app's address '${base}' is not a URL: expected e.g. http://localhost:4173/`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new TypeError(`the app's address '${base}' must start with https:// or http://`);
  url.hash = "";
  url.search = "";
  const path = url.href.replace(/#$/, "");
  // A folder gets a slash (…/app/), a page keeps its name (…/app/index.html).
  const last = url.pathname.split("/").at(-1) ?? "";
  return `${path.endsWith("/") || last.includes(".") ? path : `${path}/`}${SHARE_ROUTE}${token}`;
}
