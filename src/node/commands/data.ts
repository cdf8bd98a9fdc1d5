import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { IMPORT_FORMATS, importStream, ingest, type ImportFormat, type Problem } from "../../datasets/index.ts";
import { FileStore } from "../../store/files.node.ts";
import type { Command } from "../cli.ts";

const usage = `evalrx data check <file> [--format FORMAT] [--json] [mapping]
evalrx data import <file> [--store DIR] [--dataset ID] [--format FORMAT] [mapping]

  check    reads <file> as an import would; prints how many rows are valid and every problem with its line
           (exit 0: every row valid, 1: some are not, 3: the file cannot be read at all)
  import   adds the valid rows to the store (new ids only) and prints the dataset id and version
  --format   ${IMPORT_FORMATS.join("|")} (default: from the file name and its first bytes)
  --json     check: print {"valid": N, "problems": [{"line": L, "reason": "…"}]}
  --store    the store directory (default: .evalrx)
  --dataset  the dataset id in the store (default: the file name without its extension)
  mapping    --id COL --input COL --image COL --expected COL --label COL --cluster COL --split COL
             (CSV and Parquet; default: common column names), --delimiter CHAR for CSV
  Images are paths relative to <file>; they are checked, and stored once by content hash on import.`;

const options = {
  format: { type: "string" },
  json: { type: "boolean" },
  store: { type: "string" },
  dataset: { type: "string" },
  delimiter: { type: "string" },
  id: { type: "string" },
  input: { type: "string" },
  image: { type: "string" },
  expected: { type: "string" },
  label: { type: "string" },
  cluster: { type: "string" },
  split: { type: "string" },
} as const;

/** Reads an image path relative to the dataset file; undefined when there is no such file. */
function imageReader(file: string) {
  const base = dirname(resolve(file));
  return async (ref: string): Promise<Uint8Array | undefined> => {
    try {
      return new Uint8Array(await readFile(resolve(base, ref)));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR") return undefined;
      throw error;
    }
  };
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
  const { values, positionals } = parseArgs({ args, options, allowPositionals: true });
  const file = await requireFile(positionals[0]);
  const read = readOptions(file, values);
  let valid = 0;
  const problems: Problem[] = [];
  let detected: ImportFormat | undefined;
  const stream = importStream(
    createReadStream(file),
    { ...read, images: { read: imageReader(file) } },
    (f) => (detected = f),
  );
  for await (const batch of stream) {
    valid += batch.cases.length;
    problems.push(...batch.problems);
  }
  problems.sort((a, b) => a.line - b.line);
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
  const { values, positionals } = parseArgs({ args, options, allowPositionals: true });
  const file = await requireFile(positionals[0]);
  const read = readOptions(file, values);
  const store = await FileStore.open(values.store ?? ".evalrx");
  const datasetId = values.dataset ?? basename(file).replace(/\.[^.]+$/, "");
  try {
    const result = await ingest(store, createReadStream(file), {
      ...read,
      datasetId,
      readImage: imageReader(file),
    });
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
