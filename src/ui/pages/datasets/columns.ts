import Papa from "papaparse";
import { parquetReadObjects } from "hyparquet";
import { resolveMapping, type ColumnMapping, type ResolvedMapping } from "../../../datasets/index.ts";

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

/** The importer's names for headers: empty ones numbered, repeated ones suffixed (`a`, `a_2`). */
function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name, i) => {
    const base = name || `column_${i + 1}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base}_${count}`;
  });
}
