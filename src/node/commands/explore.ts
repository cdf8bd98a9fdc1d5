import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import Papa from "papaparse";
import { exploreCases, DEFAULT_QUESTION } from "../../agent/run-explore.ts";
import type { RunEvent } from "../../agent/events.ts";
import { stageLine } from "../../agent/progress.ts";
import {
  importDataset,
  importTable,
  resolveMapping,
  type ColumnMapping,
  type ImportResult,
} from "../../datasets/index.ts";
import { openAICompatibleJudge } from "../../evals/judge.ts";
import { writeReportFiles } from "../../report/write.node.ts";
import type { Command } from "../cli.ts";
import { numberOption } from "../eval-runs.ts";
import { codeVersion } from "./version.ts";

const usage = `evalrx explore <file> [--label COL] [--id COL] [--cluster COL] [--signals a,b,c] [-q "..."]
                      [--holdout 0.4] [--seed 1] [--alpha 0.05] [--out DIR] [--json]
                      [--judge URL --judge-model NAME]   (key from EVALRX_JUDGE_KEY)

  <file>       an eval log: JSONL, CSV, Parquet, or an lm-eval / Inspect / promptfoo log
  --label      the pass/fail column (default: passed, pass, correct, is_correct, success, verdict or label);
               a column named like failed/error/hallucinated means true = failure
  --id         the case id column (default: id, case_id, …); --cluster keeps a cluster on one side of the holdout
  --signals    test only these columns (default: every other column except identifiers)
  --out        also write DIR/report.json, DIR/events.jsonl and a self-contained DIR/report.html
  --json       print the report object on stdout (progress goes to stderr)`;

/** Reads the file through the datasets importers; eval logs with no prompt column are read as tables without input. */
async function readLog(
  file: string,
  mapping: ColumnMapping,
): Promise<ImportResult & { columns: string[]; labelColumn?: string }> {
  const bytes = readFileSync(file);
  const result = await importDataset(new Uint8Array(bytes), { name: basename(file), mapping, requireInput: false });
  const text = () => new TextDecoder().decode(bytes).replace(/^\uFEFF/, "");
  const parseRows = (): Record<string, unknown>[] =>
    result.format === "csv"
      ? Papa.parse<Record<string, unknown>>(text(), { header: true, skipEmptyLines: true }).data
      : text()
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as Record<string, unknown>);
  const noInput =
    result.cases.length === 0 &&
    result.problems.length > 0 &&
    result.problems.every((p) => /missing input/.test(p.reason));
  // JSONL rows in the dataset format must carry an input; an eval log needs none, so read such rows as a table.
  if (noInput && (result.format === "csv" || result.format === "jsonl")) {
    const rows = parseRows();
    const table = importTable(rows, mapping, { requireInput: false, numericMeta: true });
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    return { ...result, cases: table.cases, problems: table.problems, columns, labelColumn: table.mapping.label };
  }
  if (result.format === "csv" || result.format === "jsonl") {
    // Which column the importer read as the label, for the report (it detects by common names).
    const rows = parseRows().slice(0, 200);
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    return { ...result, columns, labelColumn: resolveMapping(columns, mapping, rows).label };
  }
  return { ...result, columns: [...new Set(result.cases.flatMap((c) => Object.keys(c.meta)))] };
}

export const command: Command = {
  summary: "find which columns of an eval log predict failure (M2–M4, no model), decided on sealed cases",
  usage,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        label: { type: "string" },
        id: { type: "string" },
        cluster: { type: "string" },
        signals: { type: "string" },
        question: { type: "string", short: "q" },
        holdout: { type: "string" },
        seed: { type: "string" },
        alpha: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
        judge: { type: "string" },
        "judge-model": { type: "string" },
      },
    });
    const file = positionals[0];
    if (!file) throw new Error(`which eval log? Usage:\n${usage}`);
    const mapping: ColumnMapping = {
      ...(values.label ? { label: values.label } : {}),
      ...(values.id ? { id: values.id } : {}),
      ...(values.cluster ? { cluster: values.cluster } : {}),
    };
    const imported = await readLog(file, mapping);
    const say = (line: string) => (values.json ? console.error(line) : console.log(line));
    say(
      `read ${file}: ${imported.cases.length} cases (${imported.format})${imported.problems.length ? `, ${imported.problems.length} bad rows (first: line ${imported.problems[0]!.line}: ${imported.problems[0]!.reason})` : ""}`,
    );
    const labelColumn = values.label ?? imported.labelColumn ?? null;
    const judge = values.judge
      ? openAICompatibleJudge({
          baseUrl: values.judge,
          model: values["judge-model"] ?? "default",
          apiKey: process.env.EVALRX_JUDGE_KEY,
        })
      : undefined;
    const { report, events } = await exploreCases(imported.cases, {
      question: values.question ?? DEFAULT_QUESTION,
      holdout: numberOption("holdout", values.holdout, "0.4") ?? 0.4,
      seed: numberOption("seed", values.seed, "1") ?? 1,
      alpha: numberOption("alpha", values.alpha, "0.05") ?? 0.05,
      source: basename(file),
      labelColumn,
      signals: values.signals
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      columns: imported.columns,
      judge,
      codeVersion: codeVersion(),
      sink: (event: RunEvent) => {
        const line = stageLine(event);
        if (line) say(line);
      },
    });
    if (values.out) {
      const paths = writeReportFiles(values.out, report, events);
      say(`wrote ${paths.json}, ${paths.events}, ${paths.html}`);
    }
    if (values.json) console.log(JSON.stringify(report, null, 2));
    const oneClass =
      report.provenance.data.labelDistribution.fail === 0 || report.provenance.data.labelDistribution.pass === 0;
    if (oneClass) {
      console.error(
        `evalrx explore: ${report.problems.find((p) => p.what === "label")?.why ?? "the label has one class only"}`,
      );
      return 3;
    }
    return 0;
  },
};
