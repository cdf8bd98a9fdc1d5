import { UnreadableFileError } from "./errors.ts";
import { inspectLog, inspectSample } from "./inspect.ts";
import { parseJson } from "./json.ts";
import { isObject, type Json, type LogRows } from "./logs.ts";
import type { ImportWarning, Problem } from "./types.ts";
import { zipEntries } from "./zip.ts";

/**
 * Inspect AI's `.eval` log, its default format: a zip archive of JSON
 * entries, deflate or zstd. `header.json` (the finished run: status, spec,
 * results; the last one written wins, as a header edited in place leaves the
 * old one behind), `_journal/start.json` (the run's spec, there from the
 * start), `samples/<id>_epoch_<n>.json` (one sample each; a name written again
 * is a retried sample, and the later record wins), `summaries.json` and
 * `_journal/summaries/<n>.json` (sample summaries, read only when there are
 * no sample files: a run still going), `reductions.json` (scores reduced over
 * epochs). The 2024 layout (`start.json` + `results.json` at the root) reads too.
 */

const decoder = new TextDecoder("utf-8", { fatal: true });

function parseEntry(bytes: Uint8Array): { value: unknown } | { reason: string } {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { reason: "is not valid UTF-8" };
  }
  try {
    return { value: parseJson(text) };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { reason: `is not JSON (${detail.length > 120 ? `${detail.slice(0, 117)}…` : detail})` };
  }
}

const isSampleEntry = (name: string) => name.startsWith("samples/") && name.endsWith(".json");
const isSummaryEntry = (name: string) =>
  name === "summaries.json" || (name.startsWith("_journal/summaries/") && name.endsWith(".json"));
const WANTED = new Set(["header.json", "_journal/start.json", "start.json", "results.json", "reductions.json"]);

/** The row with its input's image replaced by what `image` makes of it (dropped when that is undefined). */
async function withImage(row: unknown, image?: (ref: string) => Promise<string | undefined>): Promise<unknown> {
  if (!image || !isObject(row) || !isObject(row.input) || typeof row.input.image !== "string") return row;
  const { image: ref, ...input } = row.input;
  const replaced = await image(ref as string);
  return { ...row, input: replaced === undefined ? input : { ...input, image: replaced } };
}

/**
 * The samples of an Inspect `.eval` archive, streamed: each sample entry is
 * decompressed, parsed and turned into a row before the next is read, so the
 * archive is never held whole (only the rows, which drop the sample's events
 * and messages). A sample entry that cannot be read (corrupt, not JSON, cut
 * short) is a problem naming the entry; the rest are kept.
 *
 * @example labelLog(await readInspectArchive(chunks(file.stream()))).rows.length // one per sample and epoch
 */
export async function readInspectArchive(
  source: AsyncIterable<Uint8Array | string>,
  options: {
    /** What each sample's image becomes as its entry is read (a store key), or undefined to drop it; default: kept as is. */
    readonly image?: (ref: string) => Promise<string | undefined>;
  } = {},
): Promise<LogRows> {
  let header: Json | undefined;
  let start: Json | undefined;
  let legacyResults: Json | undefined;
  const samples = new Map<string, { line: number; row: unknown }>();
  const problems: Problem[] = [];
  const warnings: ImportWarning[] = [];
  let superseded = 0;
  let order = 0;
  let consolidated: unknown[] | undefined;
  const journal = new Map<string, unknown[]>();
  const names: string[] = [];
  const wanted = (name: string) => {
    if (names.length < 12 && !names.includes(name)) names.push(name);
    return WANTED.has(name) || isSampleEntry(name) || (samples.size === 0 && isSummaryEntry(name));
  };
  for await (const entry of zipEntries(source, { wanted })) {
    const parsed = entry.bytes ? parseEntry(entry.bytes) : { reason: entry.error };
    if (isSampleEntry(entry.name)) {
      const previous = samples.get(entry.name);
      const line = previous?.line ?? ++order;
      if (previous) superseded++;
      if ("reason" in parsed) {
        samples.delete(entry.name);
        problems.push({ line, reason: `${entry.name} ${parsed.reason}` });
      } else samples.set(entry.name, { line, row: await withImage(inspectSample(parsed.value), options.image) });
      continue;
    }
    if ("reason" in parsed) {
      warnings.push({
        code: entry.name.includes("summaries") ? "summaries-only" : "no-samples",
        message: `${entry.name} ${parsed.reason}; it was skipped`,
      });
      continue;
    }
    const value = parsed.value;
    if (entry.name === "header.json" && isObject(value)) header = value;
    else if ((entry.name === "_journal/start.json" || entry.name === "start.json") && isObject(value)) start = value;
    else if (entry.name === "results.json" && isObject(value)) legacyResults = value;
    else if (entry.name === "summaries.json" && Array.isArray(value)) consolidated = value;
    else if (isSummaryEntry(entry.name) && Array.isArray(value)) journal.set(entry.name, value);
  }
  if (!header && !start)
    throw new UnreadableFileError(
      `a zip archive that is not an Inspect AI .eval log: it has no header.json or _journal/start.json` +
        ` (entries: ${names.length ? names.join(", ") : "none"})`,
    );
  const headerOf = header ?? { ...start, ...legacyResults, ...(legacyResults ? {} : { status: "started" }) };
  if (superseded)
    warnings.push({
      code: "superseded",
      message: `${superseded} sample record(s) were written again later in the archive (a retried sample); the last record of each is read`,
      count: superseded,
    });
  let rows = [...samples.values()];
  if (rows.length === 0 && (consolidated || journal.size)) {
    // No sample files (a run still going, or samples not logged): the summaries still carry ids, inputs, targets and scores.
    const list =
      consolidated ??
      [...journal.entries()]
        .sort(([a], [b]) => Number(a.replace(/\D/g, "")) - Number(b.replace(/\D/g, "")))
        .flatMap(([, v]) => v);
    // A retried sample is summarised again in a later journal entry: the last summary of each sample and epoch wins.
    const latest = new Map<string, unknown>();
    list.forEach((s, i) => latest.set(isObject(s) ? `${String(s.id)}\u0000${String(s.epoch)}` : `#${i}`, s));
    rows = [...latest.values()].map((s, i) => ({ line: i + 1, row: inspectSample(s) }));
    warnings.push({
      code: "summaries-only",
      message: `the archive has no sample files, so its ${rows.length} sample summaries were read instead (no model output; scores as summarised)`,
      count: rows.length,
    });
  }
  return inspectLog(headerOf, rows, { warnings, problems });
}
