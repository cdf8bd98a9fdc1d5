import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import {
  importStream,
  ingest,
  type ImportFormat,
  type ImportWarning,
  type LabelSource,
  type Problem,
} from "../../datasets/index.ts";
import { FileStore } from "../../store/files.node.ts";
import type { Command } from "../cli.ts";
import { readConfined } from "../confined.ts";
import { parseCommandArgs } from "../eval-runs.ts";
import { labelLine, READ_OPTIONS, READ_USAGE, readOptions, requireFile, warningLines } from "./read-options.ts";

const usage = `evalrx data check <file> [--format FORMAT] [--json] [mapping]
evalrx data import <file> [--store DIR] [--dataset ID] [--format FORMAT] [mapping]

  check    reads <file> as an import would; prints how many rows are valid and every problem with its line
           (exit 0: every row valid, 1: some are not, 3: the file cannot be read at all)
  import   adds the valid rows to the store (new ids only) and prints the dataset id and version
           Both say what the file lacks (no samples, a cancelled run, no verdict, one class only) and,
           for an eval log, which column the labels came from.
  --json     check: print {"valid": N, "problems": [{"line": L, "reason": "…"}], "warnings": [...], "label": {...}}
  --store    the store directory (default: .evalrx)
  --dataset  the dataset id in the store (default: the file name without its extension)
  --root     the folder image paths resolve in (default: the file's folder); nothing outside it is read
${READ_USAGE}
  Images are paths relative to <file> (or --root), inside that folder: absolute paths, '..' out of it, links
  leaving it, devices, FIFOs and files over 64 MB are refused per row. Each image is decoded in full (PNG,
  JPEG; GIF, WebP and BMP by their headers) under a 40-megapixel bound, and stored once by content hash on import.`;

const options = {
  ...READ_OPTIONS,
  json: { type: "boolean" },
  store: { type: "string" },
  dataset: { type: "string" },
  root: { type: "string" },
} as const;

/** Reads an image path inside the dataset's folder (or `root`); undefined when there is no such file. */
function imageReader(file: string, root: string | undefined) {
  const base = root ?? dirname(resolve(file));
  return (ref: string): Promise<Uint8Array | undefined> => readConfined(base, ref);
}

function printProblems(problems: readonly Problem[]) {
  for (const p of problems) console.log(`  line ${p.line}: ${p.reason}`);
}

/** What the importer said of the file as a whole: the label's column, then each warning. */
function printNotes(label: LabelSource | undefined, warnings: readonly ImportWarning[]) {
  const line = labelLine(label);
  if (line) console.log(line);
  for (const w of warningLines(warnings)) console.log(w);
}

/** The error for a file with no rows at all, with what the importer knows of why (a header-only log …). */
async function noRows(file: string, warnings: readonly ImportWarning[], what: string): Promise<Error> {
  const empty = (await stat(file)).size === 0;
  const why = warnings.filter((w) => w.code !== "empty").map((w) => w.message);
  return new Error(
    `${file} holds no rows${empty ? " (the file is empty)" : ""}${why.length ? `: ${why.join("; ")}` : ""}; ${what}`,
  );
}

async function check(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const file = await requireFile(positionals[0], usage);
  const read = readOptions(file, values);
  let valid = 0;
  const problems: Problem[] = [];
  const warnings: ImportWarning[] = [];
  let label: LabelSource | undefined;
  let detected: ImportFormat | undefined;
  const stream = importStream(
    createReadStream(file),
    { ...read, images: { read: imageReader(file, values.root) } },
    (f) => (detected = f),
  );
  for await (const batch of stream) {
    valid += batch.cases.length;
    problems.push(...batch.problems);
    if (batch.warnings) warnings.push(...batch.warnings);
    if (batch.label) label = batch.label;
  }
  problems.sort((a, b) => a.line - b.line);
  if (valid === 0 && problems.length === 0) throw await noRows(file, warnings, "nothing to check");
  if (values.json) {
    console.log(
      JSON.stringify({
        valid,
        problems: problems.map(({ line, reason }) => ({ line, reason })),
        warnings,
        ...(label && { label }),
      }),
    );
  } else {
    const what = problems.length === 0 ? "every row is valid" : `${problems.length} problem(s)`;
    const noted = warnings.length ? `; ${warnings.length} warning(s)` : "";
    console.log(`${file} (${detected}): ${valid} valid row(s); ${what}${noted}`);
    printNotes(label, warnings);
    printProblems(problems);
  }
  return problems.length ? 1 : 0;
}

async function importFile(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const file = await requireFile(positionals[0], usage);
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
    if (result.rows === 0) throw await noRows(file, result.warnings, "nothing was imported");
    console.log(`dataset ${result.dataset.id} version ${result.dataset.version}`);
    console.log(
      `  ${result.added} case(s) added, ${result.skipped} already there, ${result.dataset.caseCount} in all; ` +
        `${result.problems.length} problem(s) in ${result.rows} row(s)`,
    );
    printNotes(result.label, result.warnings);
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
