import type { FailureCase } from "../core/index.ts";
import { canonicalJson } from "./canonical.ts";
import { sha256Hex } from "./hash.ts";

/**
 * What identifies a case's content? 12 hex characters of SHA-256 over the
 * canonical JSON of `{ input, expected }`: two cases with the same input and
 * expected answer hash the same wherever they live and whatever their id.
 * A plain-string input hashes as `{ prompt }`, so both spellings agree.
 *
 * @example caseHash({ input: { prompt: "2+2?" }, expected: "4" }) // "…" (12 hex)
 */
export function caseHash(row: { readonly input: unknown; readonly expected?: unknown }): string {
  return sha256Hex(canonicalJson({ input: normalizeInput(row.input), expected: row.expected })).slice(0, 12);
}

/**
 * The id a case gets when its row has none: 12 hex characters of SHA-256 over
 * the canonical JSON of its input, so re-importing the same file gives the same ids.
 *
 * @example derivedId("What is 2+2?") === derivedId({ prompt: "What is 2+2?" }) // true
 */
export function derivedId(input: unknown): string {
  return sha256Hex(canonicalJson(normalizeInput(input))).slice(0, 12);
}

/**
 * The part of a case a dataset version covers: everything that changes what
 * is evaluated or how it is grouped (id, input + expected through their
 * `caseHash`, tags, split, cluster, status), not the free-form `meta`.
 * Pass the case's `caseHash` when it is at hand, to hash the input once.
 */
export function caseVersionHash(c: FailureCase, hash: string = caseHash(c)): string {
  return sha256Hex(
    canonicalJson({ id: c.id, caseHash: hash, tags: c.tags, split: c.split, cluster: c.cluster, status: c.status }),
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
  return sha256Hex(sorted.map(([id, hash]) => `${JSON.stringify(id)} ${hash}\n`).join("")).slice(0, 12);
}

function normalizeInput(input: unknown): unknown {
  return typeof input === "string" ? { prompt: input } : input;
}
