/**
 * Model files over HTTP for code that is not a page (the CLI): a folder URL
 * (`<hub>/<owner>/<name>/resolve/main/`), and the hub's file list so a
 * model's layout is found without downloading a graph it does not use.
 */
import { isHubId, normalizeHub } from "./hub.ts";
import { MissingFileError, type FileSource } from "./session.ts";

/**
 * Files under a folder URL, read with `fetch`. A 404 is a missing file, and
 * so is an HTML page where a model file should be (a server answering every
 * path with its index); other failures say the status.
 *
 * @example
 * await httpFiles("https://huggingface.co/Xenova/gpt2/resolve/main/")("config.json") // → Uint8Array(…)
 */
export function httpFiles(
  base: string,
  options: { readonly fetch?: typeof fetch; readonly list?: () => Promise<readonly string[]> } = {},
): FileSource {
  const prefix = base.endsWith("/") ? base : `${base}/`;
  const doFetch = options.fetch ?? fetch;
  const read = async (path: string) => {
    const response = await doFetch(`${prefix}${path}`);
    const type = response.headers.get("Content-Type") ?? "";
    if (response.status === 404 || (response.ok && type.startsWith("text/html")))
      throw new MissingFileError(path, prefix);
    if (!response.ok) throw new Error(`fetching ${prefix}${path} failed: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  };
  return options.list ? Object.assign(read, { list: options.list }) : read;
}

/**
 * The files of a hub repository at `revision`, from the hub's API
 * (`<hub>/api/models/<id>/revision/<revision>`: `siblings[].rfilename`).
 *
 * @example
 * await hubFileList("https://huggingface.co", "Xenova/gpt2") // → ["config.json", "onnx/decoder_model_merged.onnx", …]
 */
export async function hubFileList(
  hub: string,
  id: string,
  options: { readonly fetch?: typeof fetch; readonly revision?: string } = {},
): Promise<string[]> {
  if (!isHubId(id)) throw new TypeError(`'${id}' is not a hub id: expected owner/name, e.g. Xenova/gpt2`);
  const url = `${normalizeHub(hub)}/api/models/${id}/revision/${encodeURIComponent(options.revision ?? "main")}`;
  const response = await (options.fetch ?? fetch)(url);
  if (response.status === 404 || response.status === 401)
    throw new Error(`the hub has no model '${id}' (or it is private): ${url} answered ${response.status}`);
  if (!response.ok) throw new Error(`listing ${id}'s files at ${url} failed: HTTP ${response.status}`);
  const body = (await response.json()) as { siblings?: { rfilename?: unknown }[] };
  if (!Array.isArray(body.siblings)) throw new Error(`${url}: expected a JSON object with a 'siblings' list`);
  return body.siblings.map((s) => s.rfilename).filter((f): f is string => typeof f === "string");
}
