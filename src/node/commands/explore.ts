import { createReadStream } from "node:fs";
import { basename } from "node:path";
import { exploreCases, DEFAULT_QUESTION } from "../../agent/run-explore.ts";
import type { RunEvent } from "../../agent/events.ts";
import { stageLine } from "../../agent/progress.ts";
import { importDataset, type ImportResult } from "../../datasets/index.ts";
import { openAICompatibleJudge } from "../../evals/judge.ts";
import { writeReportFiles } from "../../report/write.node.ts";
import type { Command } from "../cli.ts";
import { numberOption, parseCommandArgs } from "../eval-runs.ts";
import { labelLine, READ_OPTIONS, READ_USAGE, readOptions, requireFile, warningLines } from "./read-options.ts";
import { codeVersion } from "./version.ts";

const usage = `evalrx explore <file> [--format FORMAT] [--label COL] [mapping] [--signals a,b,c] [-q "..."]
                      [--holdout 0.4] [--seed 1] [--alpha 0.05] [--out DIR] [--json]
                      [--judge URL --judge-model NAME]   (key from EVALRX_JUDGE_KEY)

  <file>       an eval log: JSONL, CSV, Parquet, an Inspect .eval or .json log, lm-eval samples, promptfoo results
  --label      the pass/fail column (default: passed, pass, correct, …; in a log, the scorer or metric whose
               every value is a verdict); a column named like failed/error/hallucinated means true = failure
  --cluster    keeps a cluster on one side of the holdout (epochs of one Inspect sample share one already)
${READ_USAGE}
  --signals    test only these columns (default: every other column except identifiers and the label's own)
  --out        also write DIR/report.json, DIR/events.jsonl and a self-contained DIR/report.html
  --json       print the report object on stdout (progress goes to stderr)
  Bad rows are reported by line and skipped; columns derived from the label, or that separate pass from
  fail perfectly on the exploration split, are not tested (each is named in the report).`;

/** How many bad rows are printed before "… and N more". */
const SHOWN_PROBLEMS = 5;

/**
 * Reads the log with the same reader (and options) as `data check`; a log needs no prompt, so rows without
 * one are kept, and no image (explore tests columns, and a log's inline images would be held with every case).
 */
async function readLog(file: string, values: Record<string, unknown>): Promise<ImportResult> {
  return importDataset(createReadStream(file), { ...readOptions(file, values), requireInput: false, skipImages: true });
}

export const command: Command = {
  summary: "find which columns of an eval log predict failure (M2–M4, no model), decided on sealed cases",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        ...READ_OPTIONS,
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
      usage,
    );
    const file = await requireFile(positionals[0], usage);
    const imported = await readLog(file, values);
    const say = (line: string) => (values.json ? console.error(line) : console.log(line));
    const { problems } = imported;
    say(
      `read ${file}: ${imported.cases.length} cases (${imported.format})${problems.length ? `, ${problems.length} bad row(s) skipped` : ""}`,
    );
    for (const p of problems.slice(0, SHOWN_PROBLEMS)) say(`  line ${p.line}: ${p.reason}`);
    if (problems.length > SHOWN_PROBLEMS)
      say(`  … and ${problems.length - SHOWN_PROBLEMS} more (evalrx data check ${file} lists them all)`);
    for (const line of warningLines(imported.warnings)) say(line);
    const label = labelLine(imported.label);
    if (label) say(label);
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
      labelColumn: imported.label?.column ?? values.label ?? null,
      derived: imported.label?.derived,
      signals: values.signals
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      columns: [...new Set(imported.cases.flatMap((c) => Object.keys(c.meta)))],
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
