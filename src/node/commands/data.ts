import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { IMPORT_FORMATS, importStream, ingest, type ImportFormat, type Problem } from "../../datasets/index.ts";
import { FileStore } from "../../store/files.node.ts";
import type { Command } from "../cli.ts";
import { readConfined } from "../confined.ts";
import { parseCommandArgs } from "../eval-runs.ts";

const usage = `evalrx data check <file> [--format FORMAT] [--json] [mapping]
evalrx data import <file> [--store DIR] [--dataset ID] [--format FORMAT] [mapping]

  check    reads <file> as an import would; prints how many rows are valid and every problem with its line
           (exit 0: every row valid, 1: some are not, 3: the file cannot be read at all)
  import   adds the valid rows to the store (new ids only) and prints the dataset id and version
  --format   ${IMPORT_FORMATS.join("|")} (default: from the file name and its first bytes)
  --json     check: print {"valid": N, "problems": [{"line": L, "reason": "…"}]}
  --store    the store directory (default: .evalrx)
  --dataset  the dataset id in the store (default: the file name without its extension)
  --root     the folder image paths resolve in (default: the file's folder); nothing outside it is read
  mapping    --id COL --input COL --image COL --expected COL --label COL --cluster COL --split COL
             (CSV and Parquet; default: common column names), --delimiter CHAR for CSV
  Images are paths relative to <file> (or --root), inside that folder: absolute paths, '..' out of it, links
  leaving it, devices, FIFOs and files over 64 MB are refused per row. Each image is decoded in full (PNG,
  JPEG; GIF, WebP and BMP by their headers) under a 40-megapixel bound, and stored once by content hash on import.`;

const options = {
  format: { type: "string" },
  json: { type: "boolean" },
  store: { type: "string" },
  dataset: { type: "string" },
  root: { type: "string" },
  delimiter: { type: "string" },
  id: { type: "string" },
  input: { type: "string" },
  image: { type: "string" },
  expected: { type: "string" },
  label: { type: "string" },
  cluster: { type: "string" },
  split: { type: "string" },
} as const;

/** Reads an image path inside the dataset's folder (or `root`); undefined when there is no such file. */
function imageReader(file: string, root: string | undefined) {
  const base = root ?? dirname(resolve(file));
  return (ref: string): Promise<Uint8Array | undefined> => readConfined(base, ref);
}

/** Fails with exit 3 (as an error the CLI prints) when the file cannot be opened at all. */
async function requireFile(file: string | undefined): Promise<string> {
  if (!file) throw new Error("no file given; usage: evalrx data check <file>");
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new Error(`cannot read '${file}': no such file`);
  }
  if (!info.isFile()) throw new Error(`cannot read '${file}': not a file`);
  return file;
}

function parseFormat(value: string | undefined): ImportFormat | undefined {
  if (value === undefined) return undefined;
  if (!(IMPORT_FORMATS as readonly string[]).includes(value))
    throw new Error(`--format ${value} is not one of ${IMPORT_FORMATS.join(", ")}`);
  return value as ImportFormat;
}

/** What both sub-commands read the file as: its name, the format and column mapping given, the delimiter. */
function readOptions(file: string, values: Record<string, unknown>) {
  const format = parseFormat(values.format as string | undefined);
  const mapping: Record<string, string> = {};
  for (const key of ["id", "input", "image", "expected", "label", "cluster", "split"])
    if (typeof values[key] === "string") mapping[key] = values[key] as string;
  return {
    name: basename(file),
    ...(format && { format }),
    mapping,
    ...(typeof values.delimiter === "string" && { delimiter: values.delimiter }),
  };
}

function printProblems(problems: readonly Problem[]) {
  for (const p of problems) console.log(`  line ${p.line}: ${p.reason}`);
}

async function check(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const file = await requireFile(positionals[0]);
  const read = readOptions(file, values);
  let valid = 0;
  const problems: Problem[] = [];
  let detected: ImportFormat | undefined;
  const stream = importStream(
    createReadStream(file),
    { ...read, images: { read: imageReader(file, values.root) } },
    (f) => (detected = f),
  );
  for await (const batch of stream) {
    valid += batch.cases.length;
    problems.push(...batch.problems);
  }
  problems.sort((a, b) => a.line - b.line);
  if (valid === 0 && problems.length === 0)
    throw new Error(
      `${file} holds no rows${(await stat(file)).size === 0 ? " (the file is empty)" : ""}; nothing to check`,
    );
  if (values.json) {
    console.log(JSON.stringify({ valid, problems: problems.map(({ line, reason }) => ({ line, reason })) }));
  } else {
    const what = problems.length === 0 ? "every row is valid" : `${problems.length} problem(s)`;
    console.log(`${file} (${detected}): ${valid} valid row(s); ${what}`);
    printProblems(problems);
  }
  return problems.length ? 1 : 0;
}

async function importFile(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const file = await requireFile(positionals[0]);
  if ((await stat(file)).size === 0) throw new Error(`${file} is empty; nothing to import`);
  const read = readOptions(file, values);
  const store = await FileStore.open(values.store ?? ".evalrx");
  const datasetId = values.dataset ?? basename(file).replace(/\.[^.]+$/, "");
  try {
    const result = await ingest(store, createReadStream(file), {
      ...read,
      datasetId,
      readImage: imageReader(file, values.root),
    });
    if (result.rows === 0)
      throw new Error(
        `${file} holds no rows${(await stat(file)).size === 0 ? " (the file is empty)" : ""}; nothing was imported`,
      );
    console.log(`dataset ${result.dataset.id} version ${result.dataset.version}`);
    console.log(
      `  ${result.added} case(s) added, ${result.skipped} already there, ${result.dataset.caseCount} in all; ` +
        `${result.problems.length} problem(s) in ${result.rows} row(s)`,
    );
    printProblems(result.problems);
    return result.problems.length ? 1 : 0;
  } finally {
    await store.close();
  }
}

export const command: Command = {
  summary: "check a dataset or eval log for bad rows, or import it into the store",
  usage,
  async run(args) {
    const [sub, ...rest] = args;
    if (sub === "check") return check(rest);
    if (sub === "import") return importFile(rest);
    throw new Error(`unknown sub-command '${sub ?? ""}'; use 'data check <file>' or 'data import <file>'`);
  },
};
