import type { FailureCase } from "../core/index.ts";
import { canonicalJson } from "./canonical.ts";
import { sha256Hex, sha256Prefix, sha256PrefixOfTexts } from "./hash.ts";

/**
 * What identifies a case's content? 12 hex characters of SHA-256 over the
 * canonical JSON of `{ input, expected }`: two cases with the same input and
 * expected answer hash the same wherever they live and whatever their id.
 * A plain-string input hashes as `{ prompt }`, so both spellings agree.
 *
 * @example caseHash({ input: { prompt: "2+2?" }, expected: "4" }) // "…" (12 hex)
 */
export function caseHash(row: { readonly input: unknown; readonly expected?: unknown }): string {
  const input = normalizeInput(row.input);
  return sha256Prefix(promptText(input, row.expected) ?? canonicalJson({ input, expected: row.expected }), 12);
}

/**
 * The canonical JSON of `{ input, expected }` written directly for the shape
 * nearly every case has (`input` is `{ prompt }` or `{ prompt, image }` of
 * strings, `expected` a string or absent), or undefined for any other shape
 * (then `canonicalJson` writes it). The same bytes either way; written here
 * it skips a key sort and an object walk per case, a tenth of an import.
 */
function promptText(input: unknown, expected: unknown): string | undefined {
  if (expected !== undefined && typeof expected !== "string") return undefined;
  if (input === null || typeof input !== "object" || Object.getPrototypeOf(input) !== Object.prototype)
    return undefined;
  const { prompt, image } = input as { prompt?: unknown; image?: unknown };
  if (typeof prompt !== "string" || (image !== undefined && typeof image !== "string")) return undefined;
  for (const key in input) if (key !== "prompt" && key !== "image") return undefined;
  const inner = `{${image === undefined ? "" : `"image":${JSON.stringify(image)},`}"prompt":${JSON.stringify(prompt)}}`;
  return expected === undefined ? `{"input":${inner}}` : `{"expected":${JSON.stringify(expected)},"input":${inner}}`;
}

/**
 * The id a case gets when its row has none: 12 hex characters of SHA-256 over
 * the canonical JSON of its input, so re-importing the same file gives the same ids.
 *
 * @example derivedId("What is 2+2?") === derivedId({ prompt: "What is 2+2?" }) // true
 */
export function derivedId(input: unknown): string {
  return sha256Prefix(canonicalJson(normalizeInput(input)), 12);
}

/**
 * The part of a case a dataset version covers: everything that changes what
 * is evaluated or how it is grouped (id, input + expected through their
 * `caseHash`, tags, split, cluster, status), not the free-form `meta`.
 * Pass the case's `caseHash` when it is at hand, to hash the input once.
 */
export function caseVersionHash(c: FailureCase, hash: string = caseHash(c)): string {
  return sha256Hex(
    versionText(c, hash) ??
      canonicalJson({ id: c.id, caseHash: hash, tags: c.tags, split: c.split, cluster: c.cluster, status: c.status }),
  );
}

/**
 * The canonical JSON `caseVersionHash` hashes, written directly when every
 * field is a string (tags a list of strings) as the importer makes them, or
 * undefined otherwise; the same bytes as `canonicalJson` (keys in sorted order).
 */
function versionText(c: FailureCase, hash: string): string | undefined {
  const { id, split, cluster, status, tags } = c;
  if (typeof id !== "string" || typeof hash !== "string" || !Array.isArray(tags)) return undefined;
  if (split !== undefined && typeof split !== "string") return undefined;
  if (cluster !== undefined && typeof cluster !== "string") return undefined;
  if (status !== undefined && typeof status !== "string") return undefined;
  let list = "[";
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i];
    if (typeof tag !== "string") return undefined;
    list += i ? `,${JSON.stringify(tag)}` : JSON.stringify(tag);
  }
  return (
    `{"caseHash":${JSON.stringify(hash)}` +
    (cluster === undefined ? "" : `,"cluster":${JSON.stringify(cluster)}`) +
    `,"id":${JSON.stringify(id)}` +
    (split === undefined ? "" : `,"split":${JSON.stringify(split)}`) +
    (status === undefined ? "" : `,"status":${JSON.stringify(status)}`) +
    `,"tags":${list}]}`
  );
}

/**
 * Which version of a dataset is this? 12 hex characters of SHA-256 over its
 * cases sorted by id (each as `caseVersionHash`, one per line), so the order
 * rows came in does not matter and any edit to a case does.
 *
 * @example datasetVersion([b, a]) === datasetVersion([a, b]) // true
 */
export function datasetVersion(rows: readonly FailureCase[]): string {
  return versionFromHashes(rows.map((c) => [c.id, caseVersionHash(c)] as const));
}

/**
 * `datasetVersion` from `[id, caseVersionHash]` pairs, for a streamed import
 * that keeps the hashes but not the cases.
 */
export function versionFromHashes(pairs: Iterable<readonly [id: string, hash: string]>): string {
  const sorted = [...pairs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]![0] === sorted[i - 1]![0])
      throw new Error(`datasetVersion(): id '${sorted[i]![0]}' appears twice; ids must be unique within a dataset`);
  // JSON.stringify escapes lone surrogates, so the lines hashed one after another are the joined text's bytes.
  return sha256PrefixOfTexts(
    sorted.map(([id, hash]) => `${JSON.stringify(id)} ${hash}\n`),
    12,
  );
}

function normalizeInput(input: unknown): unknown {
  return typeof input === "string" ? { prompt: input } : input;
}
