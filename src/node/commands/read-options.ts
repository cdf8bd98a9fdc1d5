import { stat } from "node:fs/promises";
import { basename } from "node:path";
import {
  IMPORT_FORMATS,
  type ColumnMapping,
  type ImportFormat,
  type ImportOptions,
  type ImportWarning,
  type LabelSource,
} from "../../datasets/index.ts";

/**
 * How `data check`, `data import` and `explore` read a file: one set of
 * options (format, column mapping, CSV delimiter), one way of saying what
 * the importer noticed, so a file reads the same in every command.
 */

/** The `parseArgs` options every command that reads a dataset or an eval log takes. */
export const READ_OPTIONS = {
  format: { type: "string" },
  delimiter: { type: "string" },
  id: { type: "string" },
  input: { type: "string" },
  image: { type: "string" },
  expected: { type: "string" },
  label: { type: "string" },
  cluster: { type: "string" },
  split: { type: "string" },
} as const;

/** The usage lines for `READ_OPTIONS`. */
export const READ_USAGE = `  --format   ${IMPORT_FORMATS.join("|")} (default: from the file's first bytes and its name)
  mapping    --id COL --input COL --image COL --expected COL --label COL --cluster COL --split COL
             (default: common column names; for eval logs, a scorer or metric: --label match, --label rouge1_acc,
             --cluster metadata.image), --delimiter CHAR for CSV`;

const MAPPED = ["id", "input", "image", "expected", "label", "cluster", "split"] as const;

function parseFormat(value: string | undefined): ImportFormat | undefined {
  if (value === undefined) return undefined;
  if (!(IMPORT_FORMATS as readonly string[]).includes(value))
    throw new Error(`--format ${value} is not one of ${IMPORT_FORMATS.join(", ")}`);
  return value as ImportFormat;
}

/**
 * The import options the command line gives for `file`: its name (for
 * detection and messages), the format and column mapping named, the delimiter.
 *
 * @example readOptions("log.jsonl", { label: "passed" }) // { name: "log.jsonl", mapping: { label: "passed" } }
 */
export function readOptions(
  file: string,
  values: Record<string, unknown>,
): Pick<ImportOptions, "name" | "format" | "mapping" | "delimiter"> & { mapping: ColumnMapping } {
  const format = parseFormat(values.format as string | undefined);
  const mapping: Record<string, string> = {};
  for (const key of MAPPED) if (typeof values[key] === "string") mapping[key] = values[key] as string;
  return {
    name: basename(file),
    ...(format && { format }),
    mapping,
    ...(typeof values.delimiter === "string" && { delimiter: values.delimiter }),
  };
}

/** One line per warning, as the CLI prints them. */
export function warningLines(warnings: readonly ImportWarning[]): string[] {
  return warnings.map((w) => `  ! ${w.message}`);
}

/** The line that says which column the labels came from and which columns are left out as derived from it. */
export function labelLine(label: LabelSource | undefined): string | undefined {
  if (!label) return undefined;
  const others = label.derived.filter((c) => c !== label.column);
  return (
    `  label: '${label.column}' (${label.reason})` +
    (label.choices.length
      ? `; also verdicts: ${label.choices.map((c) => `'${c}'`).join(", ")} (--label picks one)`
      : "") +
    (others.length ? `; derived from it: ${others.map((c) => `'${c}'`).join(", ")}` : "")
  );
}

/** The file a command was given, or a one-line error (the CLI exits 3) when there is none, it is missing, or it is not a file. */
export async function requireFile(file: string | undefined, usage: string): Promise<string> {
  if (!file) throw new Error(`no file given; usage: ${usage.split("\n")[0]}`);
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new Error(`cannot read '${file}': no such file`);
  }
  if (!info.isFile()) throw new Error(`cannot read '${file}': not a file`);
  return file;
}
