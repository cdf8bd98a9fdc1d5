import Papa from "papaparse";
import { parquetReadObjects } from "hyparquet";
import {
  CASE_KEYS,
  resolveMapping,
  uniqueNames,
  type ColumnMapping,
  type ResolvedMapping,
} from "../../../datasets/index.ts";

/** A table's columns and which of them the import reads as which case field. */
export type TableColumns =
  | { readonly columns: readonly string[]; readonly mapping: ResolvedMapping }
  /** The mapping names a column the file does not have (the importer's own message, which lists the columns). */
  | { readonly columns: readonly string[]; readonly mappingError: string };

/** The case fields a column can be mapped onto, in the order the mapping editor shows them. */
export const MAPPED_FIELDS = [
  "id",
  "input",
  "image",
  "expected",
  "label",
  "split",
  "tags",
  "cluster",
  "status",
] as const satisfies readonly (keyof ColumnMapping)[];

/**
 * Which columns does this table (CSV or Parquet) have, and which case field
 * does each become? The same `resolveMapping` the importer runs, over every
 * row (a label or status column is only detected when all its values read as
 * one), so the page can show the detected mapping and let the user change it.
 *
 * @example tableColumns("csv", bytes, {}) // { columns: ["question", "answer", "ok"], mapping: { input: "question", expected: "answer", label: "ok" } }
 */
export async function tableColumns(
  format: "csv" | "parquet",
  bytes: Uint8Array,
  options: { readonly mapping?: ColumnMapping; readonly delimiter?: string } = {},
): Promise<TableColumns> {
  const { columns, rows } = format === "csv" ? csvRows(bytes, options.delimiter) : await parquetRows(bytes);
  try {
    return { columns, mapping: resolveMapping(columns, options.mapping, rows) };
  } catch (error) {
    return { columns, mappingError: error instanceof Error ? error.message : String(error) };
  }
}

function csvRows(bytes: Uint8Array, delimiter?: string) {
  let text = new TextDecoder("utf-8").decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const parsed = Papa.parse<string[]>(text, { delimiter: delimiter ?? "", skipEmptyLines: true });
  const [header = [], ...records] = parsed.data;
  const columns = uniqueNames(header.map((f) => f.trim()));
  const rows = records
    .filter((r) => r.length === columns.length)
    .map((r) => Object.fromEntries(columns.map((name, i) => [name, r[i]])));
  return { columns, rows };
}

async function parquetRows(bytes: Uint8Array) {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
  } catch {
    // The import says why the file cannot be read; there are no columns to map.
    return { columns: [], rows: [] };
  }
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  // Detection reads verdicts such as 1/0; Parquet integers arrive as bigints.
  const plain = rows.map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v])),
  );
  return { columns, rows: plain };
}

/** How many JSONL rows decide its columns (the importer resolves a JSONL mapping on its first 100 rows). */
export const JSONL_MAPPING_ROWS = 100;

/**
 * Which fields do these JSONL rows have, and which case field does each
 * become, when they are not in the dataset format (`input`, `expected` …)?
 * The importer's rule for JSONL: the dataset's own keys map to themselves,
 * other fields are found by their common names as in CSV (`prompt`,
 * `passed` …), an explicit mapping wins; undefined when the rows are in the
 * dataset format and nothing is mapped (there is nothing to show).
 *
 * @example jsonlColumns([{ question: "2+2?", answer: "4" }]) // { columns: ["question", "answer"], mapping: { input: "question", expected: "answer" } }
 */
export function jsonlColumns(rows: readonly unknown[], explicit: ColumnMapping = {}): TableColumns | undefined {
  const objects = rows.filter(
    (r): r is Record<string, unknown> => r !== null && typeof r === "object" && !Array.isArray(r),
  );
  const columns = [...new Set(objects.flatMap((r) => Object.keys(r)))];
  const own: Record<string, string> = {};
  for (const field of ["id", "input", "expected", "label", "cluster", "split", "tags", "status"] as const)
    if (explicit[field] === undefined && columns.includes(field)) own[field] = field;
  let mapping: ResolvedMapping;
  try {
    mapping = resolveMapping(columns, { ...own, ...explicit }, objects);
  } catch (error) {
    return { columns, mappingError: error instanceof Error ? error.message : String(error) };
  }
  const identity =
    Object.keys(explicit).length === 0 &&
    Object.entries(mapping).every(
      ([field, column]) => field === column && (CASE_KEYS as readonly string[]).includes(field),
    );
  return identity ? undefined : { columns, mapping };
}
