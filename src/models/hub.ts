/**
 * Hugging Face hub ids and the URLs their files live at — the layout the hub
 * serves (`<host>/<owner>/<name>/resolve/<revision>/<file>`) and that
 * transformers.js fetches, so a hub-shaped server elsewhere (a mirror, a
 * test server) works by changing the host alone.
 */

/** Where hub ids are fetched from unless the user says otherwise. */
export const DEFAULT_HUB = "https://huggingface.co";

/** The Cache Storage cache that keeps hub files (and 404s) in a browser, shared by both backends. */
export const HUB_CACHE = "evalrx-hub-v1";

const HUB_ID = /^[\w.-]+\/[\w.-]+$/;

/**
 * Is this an `owner/name` hub id? (No URL, no path beyond the two parts, no `..`.)
 *
 * @example
 * isHubId("Xenova/tiny-random-LlamaForCausalLM") // → true
 */
export function isHubId(id: string): boolean {
  return HUB_ID.test(id) && !id.split("/").some((part) => part === "." || part === "..");
}

/**
 * A hub address as typed (`https://huggingface.co/`, `http://127.0.0.1:8080`)
 * normalised to an origin-and-path with no trailing slash; throws, naming the
 * field, for anything that is not an http(s) URL.
 *
 * @example
 * normalizeHub("https://huggingface.co/") // → "https://huggingface.co"
 */
export function normalizeHub(address: string): string {
  let url: URL;
  try {
    url = new URL(address.trim());
  } catch {
    throw new TypeError(`hub address '${address}' is not a URL: expected e.g. ${DEFAULT_HUB}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new TypeError(`hub address '${address}' must start with https:// (or http:// for a local mirror)`);
  if (url.search || url.hash) throw new TypeError(`hub address '${address}' must not have a query or a #fragment`);
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/**
 * The folder URL of a hub model's files at `revision` (default `main`).
 *
 * @example
 * hubBase("https://huggingface.co", "owner/name") // → "https://huggingface.co/owner/name/resolve/main/"
 */
export function hubBase(hub: string, id: string, revision = "main"): string {
  if (!isHubId(id)) throw new TypeError(`'${id}' is not a hub id: expected owner/name, e.g. Xenova/gpt2`);
  return `${normalizeHub(hub)}/${id}/resolve/${encodeURIComponent(revision)}/`;
}

/**
 * The hub id and file a hub file URL names, or undefined for any other URL.
 *
 * @example
 * parseHubUrl("https://huggingface.co", "https://huggingface.co/owner/name/resolve/main/onnx/model.onnx")
 * // → { id: "owner/name", revision: "main", path: "onnx/model.onnx" }
 */
export function parseHubUrl(hub: string, url: string): { id: string; revision: string; path: string } | undefined {
  const prefix = `${normalizeHub(hub)}/`;
  if (!url.startsWith(prefix)) return undefined;
  const match = /^([\w.-]+\/[\w.-]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.slice(prefix.length));
  if (!match || !isHubId(match[1]!)) return undefined;
  return { id: match[1]!, revision: decodeURIComponent(match[2]!), path: match[3]! };
}
